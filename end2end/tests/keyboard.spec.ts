// Keyboard only, and the demo dataset end to end: an author uploads the synthetic demo file
// with the keyboard (the same bytes the demo button adds: "already uploaded"), asks for ALT,
// moves a panel with the keyboard, confirms and runs with Enter, and the revision is Verified.
// Then a draft without wasm: "Update preview", the move buttons and Confirm still work.
import { test, expect } from "@playwright/test";
import { resolve } from "node:path";
import { AUTHOR, hydrated, logIn, tabTo } from "./people";

const demo = resolve(__dirname, "..", "..", "public", "demo", "adlb-synthetic.xpt");

test.describe.configure({ mode: "serial" });

test("keyboard only: upload the demo file, ask, reorder, confirm, run to Verified", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await hydrated(page);
  await tabTo(page, page.getByLabel(/Synthetic/));
  await page.keyboard.press("Space");
  await expect(page.getByLabel(/Synthetic/)).toBeChecked();
  await tabTo(page, page.getByLabel("Dataset file (CSV, SAS XPORT or Dataset-JSON)"));
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.keyboard.press("Space")]);
  await chooser.setFiles(demo);
  await tabTo(page, page.getByRole("button", { name: "Upload" }));
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("adlb-synthetic.xpt");
  await hydrated(page);

  await tabTo(page, page.getByLabel("Question about this dataset"));
  await page.keyboard.type("ALT by visit and treatment");
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Draft: ALT by visit and treatment");
  await hydrated(page);
  const plot = page.getByRole("img", { name: /^Preview boxplot/ });
  await expect(plot).toBeVisible();
  const before = await plot.getAttribute("aria-label");
  const levels = page.getByRole("group", { name: "Which treatment levels are shown, in which panel order?" });
  const lastUp = levels.getByRole("button", { name: /up$/ }).last();
  await tabTo(page, lastUp, 200);
  await page.keyboard.press("Enter");
  await expect(lastUp).not.toBeFocused(); // the moved item's button keeps the focus; it is no longer last
  await expect(plot).not.toHaveAttribute("aria-label", before!);
  await tabTo(page, page.getByRole("button", { name: "Confirm and create the revision" }), 300);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/revisions\/rev-[0-9a-f]{32}$/);
  await hydrated(page);
  await tabTo(page, page.getByRole("button", { name: "Run governed execution" }), 100);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("status").filter({ hasText: "Status:" })).toContainText("Verified", { timeout: 180_000 });
  await expect(page.getByRole("img", { name: /^Verified boxplot/ })).toBeVisible();
});

test("the demo button leads to the same dataset, and its draft works without wasm", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/login");
  await page.getByLabel("Name").fill(AUTHOR.name);
  await page.getByLabel("Password").fill(AUTHOR.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.goto("/datasets");
  await page.getByRole("button", { name: "Try the synthetic demo dataset" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("adlb-synthetic.xpt");
  await page.getByLabel("Question about this dataset").fill("ALT over time by arm");
  await page.getByRole("button", { name: "Draft the plot" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Draft: ALT over time by arm");
  await expect(page.getByRole("img", { name: /^Preview boxplot/ })).toBeVisible();

  // A move button sends the form back to the draft page, which applies the move.
  const levels = page.getByRole("group", { name: "Which treatment levels are shown, in which panel order?" });
  const first = await levels.getByRole("checkbox").first().getAttribute("value");
  await levels.getByRole("button", { name: `Move ${first} down` }).click();
  await expect(levels.getByRole("checkbox").nth(1)).toHaveAttribute("value", first!);
  // "Update preview" applies the answers; a refused one is named beside its control.
  const visits = page.getByRole("group", { name: "Which visits are shown, in which order?" }).getByRole("checkbox");
  const kept: string[] = [];
  for (const box of await visits.all()) {
    if (await box.isChecked()) {
      kept.push((await box.getAttribute("value"))!);
      await box.uncheck();
    }
  }
  await page.getByRole("button", { name: "Update preview" }).click();
  await expect(page.locator("#error-visits")).toContainText("at least one is needed");
  await expect(page.getByRole("img", { name: /^Preview boxplot/ })).toHaveCount(0);
  // Confirm refuses it too, back on the draft page with the answers kept.
  await page.getByRole("button", { name: "Confirm and create the revision" }).click();
  await expect(page.locator("#error-visits")).toContainText("at least one is needed");
  await expect(levels.getByRole("checkbox").nth(1)).toHaveAttribute("value", first!);
  for (const visit of kept.slice(0, 3)) {
    await page.getByRole("group", { name: "Which visits are shown, in which order?" }).getByLabel(visit, { exact: true }).check();
  }
  await page.getByRole("button", { name: "Confirm and create the revision" }).click();
  await expect(page).toHaveURL(/\/revisions\/rev-[0-9a-f]{32}$/);
  await expect(page.getByRole("status").filter({ hasText: "Status:" })).toContainText("Not run yet");
  await context.close();
});

test("a file dropped on the upload field becomes the file to upload", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await hydrated(page);
  const dropped = await page.evaluateHandle(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File(["USUBJID,AVAL\n1,2\n"], "dropped.csv", { type: "text/csv" }));
    return transfer;
  });
  await page.dispatchEvent("#drop-zone", "dragover", { dataTransfer: dropped });
  await page.dispatchEvent("#drop-zone", "drop", { dataTransfer: dropped });
  const chosen = await page
    .getByLabel("Dataset file (CSV, SAS XPORT or Dataset-JSON)")
    .evaluate((input) => Array.from((input as HTMLInputElement).files ?? []).map((f) => f.name));
  expect(chosen).toEqual(["dropped.csv"]);
});
