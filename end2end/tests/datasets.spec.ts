// Datasets in a real browser against the real server: an author uploads the pilot's ADLBC
// (34 MB) and watches the progress bar, reads the profile's warnings, is told why a file that
// is not a dataset is refused, adds the demo dataset in one click; an account without the
// author role gets no upload form.
import { test, expect } from "@playwright/test";
import { join, resolve } from "node:path";
import { ADMIN, AUTHOR, hydrated, logIn, shoot } from "./people";

const pilot = resolve(__dirname, "..", "..", "..", "shared", "data", "adlbc.xpt");

test.describe.configure({ mode: "serial" });

test("an author uploads the pilot with a progress bar and reads its warnings", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Datasets" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Datasets");
  await hydrated(page);
  // Slow the upload down (20 MB/s) so the bar has time to move.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: 20 * 1024 * 1024,
  });
  await page.getByLabel(/De-identified/).check();
  await page.getByLabel("Dataset file (CSV or SAS XPORT v5)").setInputFiles(pilot);
  await page.getByRole("button", { name: "Upload" }).click();
  const bar = page.getByRole("progressbar", { name: "Upload progress" });
  await expect(bar).toBeVisible();
  const first = Number(await bar.getAttribute("value"));
  await expect.poll(async () => Number((await bar.getAttribute("value")) ?? Infinity)).toBeGreaterThan(first);
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}$/, { timeout: 30_000 });
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

  await expect(page.getByRole("heading", { level: 1 })).toHaveText("adlbc.xpt");
  await expect(page.getByText("74264 × 46")).toBeVisible();
  const warnings = page.getByRole("region", { name: /Reviewer warnings/ });
  await expect(warnings).toContainText("leading or trailing blanks");
  await expect(warnings).toContainText("have no AVISITN to order their visit");
  await expect(warnings).toContainText("unit only in the PARAM label");
  await expect(page.getByRole("row", { name: /AVISITN/ })).toContainText("visit order");
  await shoot(page, "dataset");
});

test("a file that is not a dataset is refused beside the control, and nothing is added", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await hydrated(page);
  await page.getByLabel(/Synthetic/).check();
  await page.getByLabel("Dataset file (CSV or SAS XPORT v5)").setInputFiles({
    name: "notes.png",
    mimeType: "image/png",
    buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  });
  await page.getByRole("button", { name: "Upload" }).click();
  await expect(page.locator("#upload-error")).toContainText("notes.png: the upload is a PNG file");
  await expect(page).toHaveURL(/\/datasets$/);
  await expect(page.getByRole("table")).not.toContainText("notes.png");
});

test("the demo dataset is one click, and the same bytes are one dataset", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await hydrated(page);
  await page.getByRole("button", { name: "Try the synthetic demo dataset" }).click();
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("adlb-synthetic.xpt");
  await page.goto("/datasets");
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows).toHaveCount(3); // header, demo, pilot
  await expect(page.getByRole("table")).toContainText(`by ${AUTHOR.name}`);
  await shoot(page, "datasets");
});

test("without the author role there is no upload form", async ({ page }) => {
  await logIn(page, ADMIN);
  await page.goto("/datasets");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Datasets");
  await expect(page.getByRole("table")).toContainText("adlbc.xpt");
  await expect(page.getByRole("button", { name: "Upload" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Try the synthetic demo dataset" })).toHaveCount(0);
});
