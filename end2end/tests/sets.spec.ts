// Figure sets in a real browser with real R: an author turns the ALT draft's answers into a set
// of every ADLBC chemistry parameter (the derived ×ULN twins unticked), confirms it, presses Run
// all and watches every figure reach Verified without a reload; the PDF and SVG of a figure are
// downloaded and read. A reviewer then signs all but one in one signing session (the first
// signature with the user name and the password, each one after with the password only) and
// sends the last one back; the set's counts and the author's home page say so.
import { test, expect, type Page } from "@playwright/test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUTHOR, QA, hydrated, logIn, shoot, tabTo } from "./people";

test.describe.configure({ mode: "serial" });

const CHEMISTRY = [
  "ALB", "ALP", "ALT", "AST", "BILI", "BUN", "CA", "CHOL", "CK",
  "CL", "CREAT", "GGT", "GLUC", "K", "PHOS", "PROT", "SODIUM", "URATE",
];
let setUrl = "";

function figure(page: Page, code: string) {
  return page.getByRole("article", { name: new RegExp(`^${code} — `) });
}

test("an author drafts every chemistry parameter as a set, confirms it and runs all", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await page.getByRole("link", { name: "adlbc.xpt" }).click();
  await page.getByLabel("Question about this dataset").fill("ALT over time by arm");
  await page.getByRole("button", { name: "Draft the plot" }).click();
  await hydrated(page);
  await page.getByRole("button", { name: "Draft a figure set from these answers" }).click();
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}\/set\?/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Figure set: ALT over time by arm");
  await hydrated(page);

  // The shared answers once; every parameter listed, the chemistry ones ticked, each with its own
  // unit and preview.
  const shared = page.getByRole("region", { name: "Shared answers (every figure)" });
  await expect(shared.getByText("Placebo, Xanomeline Low Dose, Xanomeline High Dose")).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "parameters ticked" })).toHaveText(
    "18 parameters ticked; 18 ready to confirm.",
  );
  for (const code of CHEMISTRY) {
    await expect(page.getByLabel(`Include ${code}`, { exact: true })).toBeChecked();
  }
  await expect(page.getByLabel("Include _ALT (its code looks derived)")).not.toBeChecked();
  await expect(page.getByLabel("Unit of ALT")).toHaveValue("U/L");
  await expect(page.getByLabel("Unit of SODIUM")).toHaveValue("mmol/L");
  await expect(page.getByRole("figure", { name: "Preview of CK" }).getByRole("img")).toBeVisible();

  // A unit the data contradicts opens that parameter only, and Confirm refuses the whole set.
  await page.getByLabel("Unit of BILI").fill("mg/dL");
  await page.getByRole("button", { name: "Update the set" }).click();
  await expect(page.getByRole("status").filter({ hasText: "parameters ticked" })).toHaveText(
    "18 parameters ticked; 17 ready to confirm.",
  );
  await expect(page.getByRole("alert", { name: "Open questions of BILI" })).toContainText("unit");
  await page.getByRole("button", { name: "Confirm the set: create 18 revisions" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Nothing was created" })).toContainText("BILI: ");
  await page.getByLabel("Unit of BILI").fill("umol/L");
  await page.getByRole("button", { name: "Update the set" }).click();
  await expect(page.getByRole("status").filter({ hasText: "parameters ticked" })).toHaveText(
    "18 parameters ticked; 18 ready to confirm.",
  );
  await hydrated(page);
  await shoot(page, "set-draft");
  await shoot(page, "set-draft-800", 800);

  await page.getByRole("button", { name: "Confirm the set: create 18 revisions" }).click();
  await expect(page).toHaveURL(/\/sets\/set-[0-9a-f]{32}$/);
  setUrl = page.url();
  await hydrated(page);
  await expect(page.getByRole("status").filter({ hasText: "figures:" })).toHaveText("18 figures: 18 not run yet");
  await page.getByRole("button", { name: "Run all" }).click();
  // Live: the counts follow the runs without a reload.
  await expect(page.getByRole("status").filter({ hasText: "figures:" })).toHaveText(
    "18 figures: 18 verified, waiting for a signature",
    { timeout: 300_000 },
  );
  await expect(page.getByRole("button", { name: "Run all" })).toHaveCount(0);
  await expect(figure(page, "ALT").getByRole("img", { name: "Boxplot of ALT" })).toBeVisible();
  await shoot(page, "set-verified");

  // The report-ready files of one figure: the PDF's text holds its footnotes; the SVG is SVG.
  const links = figure(page, "GLUC");
  const pdf = await page.request.get((await links.getByRole("link", { name: "Download plot.pdf of GLUC" }).getAttribute("href"))!);
  expect(pdf.status()).toBe(200);
  const dir = mkdtempSync(join(tmpdir(), "adamviz-set-"));
  writeFileSync(join(dir, "plot.pdf"), await pdf.body());
  const text = execFileSync("pdftotext", ["-layout", join(dir, "plot.pdf"), "-"], { encoding: "utf8" });
  expect(text).toContain("Status when drawn: Draft.");
  expect(text).toContain("GLUC");
  const svg = await page.request.get((await links.getByRole("link", { name: "Download plot.svg of GLUC" }).getAttribute("href"))!);
  const root = await page.evaluate(
    (source) => new DOMParser().parseFromString(source, "image/svg+xml").documentElement.namespaceURI,
    await svg.text(),
  );
  expect(root).toBe("http://www.w3.org/2000/svg");
});

test("a reviewer signs all but one in one signing session and sends one back", async ({ page, browser }) => {
  await logIn(page, QA);
  await page.goto(setUrl);
  await hydrated(page);
  for (const [index, code] of CHEMISTRY.entries()) {
    const card = figure(page, code);
    const form = card.getByRole("form");
    const userName = form.getByLabel("User name (first signature of this session)");
    if (index === 0) {
      // The first signature of the session: user name and password.
      await expect(userName).toBeVisible();
      // With the keyboard alone: into the meanings (Reviewed first), an arrow to Approved, the
      // user name, the password, Enter.
      await tabTo(page, form.getByRole("group", { name: /^Meaning of your signature/ }).getByLabel("Reviewed"));
      await page.keyboard.press("ArrowDown");
      await expect(form.getByRole("group", { name: /^Meaning of your signature/ }).getByLabel("Approved")).toBeChecked();
      await tabTo(page, userName);
      await page.keyboard.type(QA.name);
      await tabTo(page, form.getByLabel("Password (re-enter it to sign)"));
      await page.keyboard.type(QA.password);
      await page.keyboard.press("Enter");
      await expect(card.getByText(/^Approved by quinn/)).toBeVisible();
      continue;
    } else {
      // Every one after it: the password alone.
      await expect(userName).toHaveCount(0);
      if (code === "URATE") {
        await form.getByRole("group", { name: "Decision" }).getByLabel("Request changes").check();
        await form.getByLabel("Comment (required to request changes)").fill("Use the fasting samples only.");
      } else {
        await form.getByRole("group", { name: /^Meaning of your signature/ }).getByLabel("Approved").check();
      }
    }
    await form.getByLabel("Password (re-enter it to sign)").fill(QA.password);
    await form.getByRole("button", { name: "Sign" }).click();
    await expect(card.getByText(code === "URATE" ? /^Changes requested by quinn/ : /^Approved by quinn/)).toBeVisible();
  }
  await expect(page.getByRole("status").filter({ hasText: "figures:" })).toHaveText("18 figures: 17 approved, 1 sent back");
  await shoot(page, "set-signed");
  await shoot(page, "set-signed-800", 800);
  const urate = (await figure(page, "URATE").getByRole("link", { name: /^Open revision/ }).getAttribute("href"))!;

  // Each signature is its own approval of its own figure, in that figure's evidence.
  await figure(page, "ALB").getByRole("link", { name: /^Open revision/ }).click();
  await hydrated(page);
  await expect(page.getByRole("region", { name: "Signatures" }).getByRole("listitem").first()).toContainText(
    /signed by quinn on .*; meaning: approved/,
  );

  const author = await (await browser.newContext()).newPage();
  await logIn(author, AUTHOR);
  await author.goto("/");
  await hydrated(author);
  const sentBack = author.getByRole("region", { name: /^Sent back to me \(\d+\)$/ });
  await expect(sentBack.locator(`a[href="${urate}"]`)).toBeVisible();

  // The set's evidence bundle: every figure's own bundle and the signed set manifest, checked
  // offline under the installation's key.
  await author.goto(setUrl);
  await hydrated(author);
  const [download] = await Promise.all([
    author.waitForEvent("download"),
    author.getByRole("link", { name: "Download the set's evidence bundle" }).click(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "adamviz-set-bundle-"));
  const bundle = join(dir, "set.zip");
  await download.saveAs(bundle);
  const adamviz = process.env.ADAMVIZ_BIN ?? join(__dirname, "..", "..", "target", "debug", "adamviz");
  const shown = spawnSync(adamviz, ["key", "show", "--data-dir", process.env.ADAMVIZ_E2E_DATA_DIR!], { encoding: "utf8" });
  expect(shown.status, shown.stderr).toBe(0);
  const trustedKey = join(dir, "installation-key.pub");
  writeFileSync(trustedKey, shown.stdout);
  const run = spawnSync(adamviz, ["evidence", "validate", bundle, "--trusted-key", trustedKey], { encoding: "utf8" });
  expect(run.status, run.stdout + run.stderr).toBe(0);
  expect(run.stdout).toMatch(/^figure set bundle set-[0-9a-f]{32}/);
  expect(run.stdout.match(/ PASS$/gm)?.length).toBe(18);
  expect(run.stdout).toContain("PASS: the set manifest and every figure's bundle are signed by the trusted key");
});

test("a new data cut: Re-run on the new data makes the children, and the compare shows exactly the changed cells", async ({ page }) => {
  // The next delivery of the pilot: some subjects given Week 26 records, one ALT value changed.
  const dir = mkdtempSync(join(tmpdir(), "adamviz-cut-"));
  const cutFile = join(dir, "adlbc-2026-12.xpt");
  const generator = process.env.ADAMVIZ_CUT_BIN ?? join(__dirname, "..", "..", "target", "debug", "examples", "new_data_cut");
  const made = spawnSync(generator, [join(__dirname, "..", "..", "..", "shared", "data", "adlbc.xpt"), cutFile, "3"], { encoding: "utf8" });
  expect(made.status, made.stderr).toBe(0);
  const cut = JSON.parse(made.stdout) as {
    added_subjects: [string, string][];
    changed: [string, string, string, string, number, number];
  };
  const expected = new Set([
    ...cut.added_subjects.map(([, arm]) => `${arm} | Week 26`),
    `${cut.changed[1]} | Week 12`,
  ]);

  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await hydrated(page);
  await page.getByLabel(/De-identified/).check();
  await page.getByLabel("Dataset file (CSV, SAS XPORT or Dataset-JSON)").setInputFiles(cutFile);
  await page.getByRole("button", { name: "Upload" }).click();
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}$/, { timeout: 30_000 });
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("adlbc-2026-12.xpt");

  // The set made on the earlier cut offers the re-run.
  await page.goto(setUrl);
  await hydrated(page);
  const newer = page.getByRole("note", { name: "A newer data cut" });
  await expect(newer).toContainText("adlbc-2026-12.xpt");
  await newer.getByRole("button", { name: "Re-run on the new data" }).click();
  await expect(page).toHaveURL(/\/datasets\/[0-9a-f]{64}\/set\?/);
  await hydrated(page);
  await expect(page.getByText(/^Re-running figure set/)).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "parameters ticked" })).toHaveText(
    "18 parameters ticked; 18 ready to confirm.",
  );
  await page.getByRole("button", { name: "Confirm the set: create 18 revisions" }).click();
  await expect(page).toHaveURL(/\/sets\/set-[0-9a-f]{32}$/);
  expect(page.url()).not.toBe(setUrl);
  await hydrated(page);
  await expect(page.getByText(/^Re-runs figure set/)).toBeVisible();
  await page.getByRole("button", { name: "Run all" }).click();
  await expect(page.getByRole("status").filter({ hasText: "figures:" })).toHaveText(
    "18 figures: 18 verified, waiting for a signature",
    { timeout: 300_000 },
  );
  // Each child beside its parent, with what changed.
  await expect(figure(page, "ALT")).toContainText(`${expected.size} of`);
  await shoot(page, "set-new-cut");
  await figure(page, "ALT").getByRole("link", { name: "Compare ALT with the earlier cut" }).click();
  await expect(page).toHaveURL(/\/revisions\/compare\?a=rev-[0-9a-f]{32}&b=rev-[0-9a-f]{32}$/);
  await hydrated(page);
  const rows = page.getByRole("region", { name: "Statistics per cell" }).getByRole("row");
  const differing = new Set<string>();
  for (const row of await rows.all()) {
    const cells = await row.getByRole("cell").allInnerTexts();
    if (cells.length > 0 && cells[0] !== "same") differing.add(`${cells[1]} | ${cells[2]}`);
  }
  expect([...differing].sort()).toEqual([...expected].sort());
  await expect(page.getByRole("status").filter({ hasText: "cells differ" })).toContainText(
    `${expected.size} of`,
  );
  await shoot(page, "compare-new-cut");

  // The history's data-cut filters.
  await page.goto("/revisions?cut=revised_for_newer_cut");
  await hydrated(page);
  await expect(page.getByRole("status").filter({ hasText: "revisions;" })).toHaveText("18 revisions; page 1 of 1");
  await page.goto("/revisions?cut=approved_on_older_cut");
  await hydrated(page);
  await expect(page.getByLabel("Data cut")).toHaveValue("approved_on_older_cut");
  // The set's 17 approved figures and the ALT revision the review approved.
  await expect(page.getByRole("status").filter({ hasText: "revisions;" })).toHaveText("18 revisions; page 1 of 1");

  // The home page: the author's revisions on the earlier cut are listed as having a newer one.
  await page.goto("/");
  await hydrated(page);
  await expect(page.getByRole("region", { name: /^Made on data that has a newer cut \(\d+\)$/ })).toBeVisible();
});
