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
  await page.getByLabel("Dataset file (CSV, SAS XPORT or Dataset-JSON)").setInputFiles(pilot);
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
  await page.getByLabel("Dataset file (CSV, SAS XPORT or Dataset-JSON)").setInputFiles({
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

test("a CDISC Dataset-JSON file is read with the labels its metadata gives", async ({ page }) => {
  const columns = [
    { itemOID: "IT.USUBJID", name: "USUBJID", label: "Unique Subject Identifier", dataType: "string", length: 11 },
    { itemOID: "IT.TRTA", name: "TRTA", label: "Actual Treatment", dataType: "string", length: 20 },
    { itemOID: "IT.PARAMCD", name: "PARAMCD", label: "Parameter Code", dataType: "string", length: 8 },
    { itemOID: "IT.AVISIT", name: "AVISIT", label: "Analysis Visit", dataType: "string", length: 12 },
    { itemOID: "IT.AVAL", name: "AVAL", label: "Analysis Value", dataType: "double" },
    { itemOID: "IT.ADT", name: "ADT", label: "Analysis Date", dataType: "date", targetDataType: "integer", displayFormat: "DATE9." },
  ];
  const rows = [
    ["01-701-1015", "Placebo", "SYSBP", "Baseline", 120.5, "2014-01-02"],
    ["01-701-1015", "Placebo", "SYSBP", "Week 2", 118, "2014-01-16"],
    ["01-701-1023", "Drug 54 mg", "SYSBP", "Baseline", 131, "2014-01-03"],
    ["01-701-1023", "Drug 54 mg", "SYSBP", "Week 2", null, null],
  ];
  const metadata = {
    datasetJSONCreationDateTime: "2026-12-07T00:00:00",
    datasetJSONVersion: "1.1.0",
    itemGroupOID: "IG.ADVS",
    records: rows.length,
    name: "ADVS",
    label: "Vital Signs Analysis Dataset",
    columns,
  };
  const ndjson = [metadata, ...rows].map((line) => JSON.stringify(line)).join("\n") + "\n";
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await hydrated(page);
  await page.getByLabel(/Synthetic/).check();
  await page.getByLabel("Dataset file (CSV, SAS XPORT or Dataset-JSON)").setInputFiles({
    name: "advs-mini.ndjson",
    mimeType: "application/x-ndjson",
    buffer: Buffer.from(ndjson),
  });
  await page.getByRole("button", { name: "Upload" }).click();
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("advs-mini.ndjson");
  await expect(page.getByText("Dataset-JSON (member ADVS)")).toBeVisible();
  await expect(page.getByRole("row", { name: /AVAL/ })).toContainText("Analysis Value");
  await expect(page.getByRole("row", { name: /ADT/ })).toContainText("numeric (date, DATE9.)");
  await expect(page.getByRole("row", { name: /USUBJID/ })).toContainText("character (string, length 11)");
  await shoot(page, "dataset-json");
  await shoot(page, "dataset-json-800", 800);
});

test("without the author role there is no upload form", async ({ page }) => {
  await logIn(page, ADMIN);
  await page.goto("/datasets");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Datasets");
  await expect(page.getByRole("table")).toContainText("adlbc.xpt");
  await expect(page.getByRole("button", { name: "Upload" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Try the synthetic demo dataset" })).toHaveCount(0);
});
