// Accessibility: axe-core on every page, logged out and as each role, with zero serious or
// critical violations.
import { test, expect, type Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import { ADMIN, AUTHOR, hydrated, logIn, shoot } from "./people";

async function seriousViolations(page: Page): Promise<string[]> {
  await hydrated(page);
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join("; ")}`);
}

test("every page has no serious or critical axe violation", async ({ page }) => {
  await page.goto("/login");
  expect(await seriousViolations(page), "/login").toEqual([]);

  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  const dataset = await page.getByRole("link", { name: "adlbc.xpt" }).getAttribute("href");
  await page.goto("/revisions");
  const revision = await page.getByRole("table").getByRole("link").first().getAttribute("href");
  const pages = [
    "/",
    "/datasets",
    dataset!,
    `${dataset}/draft?question=ALT+over+time+by+arm`,
    "/revisions",
    revision!,
    "/evidence",
  ];
  for (const path of pages) {
    await page.goto(path);
    expect(await seriousViolations(page), path).toEqual([]);
    if (path === "/revisions") await shoot(page, "revisions");
  }
  // The comparison of the two newest revisions, from the history's Compare form.
  await page.goto("/revisions");
  await hydrated(page);
  await page.getByRole("button", { name: "Compare" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Compare revisions");
  expect(await seriousViolations(page), page.url()).toEqual([]);
  await logIn(page, ADMIN);
  await page.goto("/admin/accounts");
  expect(await seriousViolations(page), "/admin/accounts").toEqual([]);
});
