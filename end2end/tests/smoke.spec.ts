// Smoke test: the server-rendered home page hydrates in a real browser, reacts to a click, and
// navigates between sections on the client.
import { test, expect, type Page } from "@playwright/test";
import { ADMIN, logIn } from "./people";

test.beforeEach(async ({ page }) => {
  await logIn(page, ADMIN);
});

/** Collects console errors and uncaught exceptions so a test can assert there were none. */
function recordBrowserErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

test("home page hydrates and the governed path toggles", async ({ page }) => {
  const errors = recordBrowserErrors(page);
  await page.goto("/");
  await expect(page.locator("#app")).toHaveAttribute("data-hydrated", "true");
  await expect(page).toHaveTitle("Home · adamviz");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Governed boxplots from ADaM data");

  const toggle = page.getByRole("button", { name: "Show the governed path" });
  const steps = page.locator("#governed-steps");
  await expect(steps).toBeHidden();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");

  await toggle.click();
  await expect(steps).toBeVisible();
  await expect(steps.locator("li")).toHaveCount(8);
  await expect(steps.locator("li").first()).toContainText("Upload");
  const hide = page.getByRole("button", { name: "Hide the governed path" });
  await expect(hide).toHaveAttribute("aria-expanded", "true");

  await hide.click();
  await expect(steps).toBeHidden();

  if (process.env.ADAMVIZ_SCREENSHOT) {
    await page.getByRole("button", { name: "Show the governed path" }).click();
    await page.setViewportSize({ width: 1200, height: 800 });
    await page.screenshot({ path: process.env.ADAMVIZ_SCREENSHOT });
  }
  expect(errors).toEqual([]);
});

test("navigation moves between sections without a page load", async ({ page }) => {
  const errors = recordBrowserErrors(page);
  await page.goto("/");
  await expect(page.locator("#app")).toHaveAttribute("data-hydrated", "true");
  // A full page load would reset this marker; client-side routing keeps it.
  await page.evaluate(() => ((window as unknown as { adamvizMarker: number }).adamvizMarker = 42));

  for (const section of ["Datasets", "Revisions", "Evidence"]) {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: section }).click();
    await expect(page).toHaveURL(new RegExp(`/${section.toLowerCase()}$`));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(section);
    await expect(page).toHaveTitle(`${section} · adamviz`);
    await expect(page.getByRole("link", { name: section })).toHaveAttribute("aria-current", "page");
    // Nothing has been run yet at this point of the suite: Revisions counts none, Evidence has
    // no bundle; Datasets has content by now.
    if (section === "Revisions") await expect(page.getByRole("status")).toContainText("0 revisions");
    if (section === "Evidence") await expect(page.getByText("No revision is approved yet.")).toBeVisible();
  }
  const marker = await page.evaluate(() => (window as unknown as { adamvizMarker?: number }).adamvizMarker);
  expect(marker).toBe(42);
  expect(errors).toEqual([]);
});

test("the health check answers through the same server", async ({ request }) => {
  const response = await request.get("/healthz");
  expect(response.status()).toBe(200);
  expect(await response.json()).toMatchObject({ status: "ok" });
});
