// The accounts the browser tests create and log in with, and the helpers they share.
import { expect, type Locator, type Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const ADMIN = { name: "ada", password: "ada's long admin password" };
// Each account's `temporary` password is the one the admin sets; at the first login its owner
// replaces it with `password`, which only they know.
export const AUTHOR = { name: "ann", password: "ann's long author password", temporary: "ann's temporary one" };
export const REVIEWER = { name: "rex", password: "rex's long reviewer password", temporary: "rex's temporary one" };
/** A reviewer the lockout test leaves alone (rex ends that test locked). */
export const QA = { name: "quinn", password: "quinn's long reviewer password", temporary: "quinn's temporary one" };

/** The one-time setup link the server printed on stderr at its first start. */
export async function setupLink(): Promise<string> {
  const file = join(process.env.ADAMVIZ_E2E_DATA_DIR!, "server.stderr");
  for (let i = 0; i < 50; i++) {
    const match = readFileSync(file, "utf8").match(/create the first admin at (\S+)/);
    if (match) return match[1];
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no setup link in ${file}`);
}

/** Waits until the page is hydrated. */
export async function hydrated(page: Page): Promise<void> {
  await expect(page.locator("#app")).toHaveAttribute("data-hydrated", "true");
}

/** Logs in through the login page and waits for the home page. */
export async function logIn(page: Page, who: { name: string; password: string }): Promise<void> {
  await page.goto("/login");
  await hydrated(page);
  await page.getByLabel("Name").fill(who.name);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByLabel("Account")).toContainText(who.name);
}

/** Saves a screenshot of the page for the README when ADAMVIZ_SCREENSHOT_DIR is set (make screenshot). */
export async function shoot(page: Page, name: string, width = 1280): Promise<void> {
  const dir = process.env.ADAMVIZ_SCREENSHOT_DIR;
  if (!dir) return;
  const before = page.viewportSize();
  await page.setViewportSize({ width, height: 800 });
  await page.screenshot({ path: join(dir, `screenshot-${name}.png`), fullPage: false });
  if (before) await page.setViewportSize(before);
}

/** Presses Tab until `target` has the focus (at most `limit` times): proves it is reachable by keyboard. */
export async function tabTo(page: Page, target: Locator, limit = 80): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`not reached with ${limit} presses of Tab: ${target}`);
}
