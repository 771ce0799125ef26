// The governed flow in a real browser, with the real server, real R and real Chromium: an
// author asks for ALT over time by arm on the pilot ADLBC, reorders the panels and changes
// the low-N threshold while the preview follows, confirms, runs, and watches the status reach
// Verified without a reload; the PNG, the checks and the statistics are read back, and the
// downloaded script and snapshot reproduce the statistics with Rscript. Then the refusals:
// no session, no PNG; a reviewer gets no Run button, and the server says 403.
import { test, expect, type Page } from "@playwright/test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUTHOR, QA, hydrated, logIn, shoot } from "./people";
import { decodePng } from "./png";
import { flipStoredByte } from "./zipflip";

test.describe.configure({ mode: "serial" });

const LEVELS = "Which treatment levels are shown, in which panel order?";
let revisionUrl = "";

async function levelOrder(page: Page): Promise<string[]> {
  return page.getByRole("group", { name: LEVELS }).getByRole("checkbox").evaluateAll((boxes) =>
    boxes.map((box) => (box as HTMLInputElement).value),
  );
}

test("an author drafts, reorders, changes the low-N threshold, watches the preview and confirms", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/datasets");
  await page.getByRole("link", { name: "adlbc.xpt" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("adlbc.xpt");
  await page.getByLabel("Question about this dataset").fill("ALT over time by arm");
  await page.getByRole("button", { name: "Draft the plot" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Draft: ALT over time by arm");
  await hydrated(page);
  // The draft's explanations: which words matched what.
  const matched = page.getByRole("group").filter({ hasText: "What the question matched" });
  await expect(page.getByText('the word "alt" is its code')).toBeVisible();
  await expect(page.getByText("PARAMCD = ALT (Alanine Aminotransferase (U/L))")).toBeVisible();
  void matched;

  const plot = page.getByRole("img", { name: /^Preview boxplot/ });
  await expect(plot).toHaveAttribute("aria-label", /\(Placebo, Xanomeline Low Dose, Xanomeline High Dose\)/);
  await expect(plot).toHaveAttribute("aria-label", /, 0 low-N cells/);
  await expect(page.getByText("Preview — not the verified plot.")).toBeVisible();

  // Reorder: High Dose first, with the keyboard focus staying on the moved item's button.
  const up = page.getByRole("button", { name: "Move Xanomeline High Dose up" });
  await up.click();
  await expect(up).toBeFocused();
  await page.keyboard.press("Enter");
  expect(await levelOrder(page)).toEqual(["Xanomeline High Dose", "Placebo", "Xanomeline Low Dose"]);
  await expect(plot).toHaveAttribute("aria-label", /\(Xanomeline High Dose, Placebo, Xanomeline Low Dose\)/);

  // A higher low-N threshold marks cells as low N in the preview.
  await page.getByLabel("Below how many subjects is a cell low N?").fill("60");
  await expect(plot).not.toHaveAttribute("aria-label", /, 0 low-N cells/);
  await expect(plot.getByText("low N", { exact: true }).first()).toBeVisible();
  // N labels under the boxes: the baseline Placebo box has 86 subjects.
  await expect(plot.getByText("86", { exact: true }).first()).toBeVisible();

  // An answer the data refuses is named beside its control.
  await page.getByLabel("Below how many subjects is a cell low N?").fill("0");
  await expect(page.locator("#error-low_n_threshold")).toContainText("whole number from 1 to 1000");
  await page.getByLabel("Below how many subjects is a cell low N?").fill("60");
  await expect(page.locator("#error-low_n_threshold")).toBeEmpty();
  await shoot(page, "draft");
  await shoot(page, "draft-800", 800);

  await page.getByRole("button", { name: "Confirm and create the revision" }).click();
  await expect(page).toHaveURL(/\/revisions\/rev-[0-9a-f]{32}$/);
  await expect(page.getByText("Draft", { exact: true }).first()).toBeVisible();
  revisionUrl = page.url();
});

test("the run moves to Verified without a reload; PNG, checks and statistics are right", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto(revisionUrl);
  await hydrated(page);
  let navigations = 0;
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) navigations++;
  });
  const status = page.getByRole("status").filter({ hasText: "Status:" });
  await expect(status).toContainText("Not run yet");
  const seen = new Set<string>();
  await page.getByRole("button", { name: "Run governed execution" }).click();
  await expect
    .poll(
      async () => {
        const text = (await status.textContent()) ?? "";
        seen.add(text.replace(/\(\d+ s\)/, "").trim());
        return text;
      },
      { timeout: 180_000, intervals: [200] },
    )
    .toContain("Verified");
  expect(navigations).toBe(0);
  expect([...seen].some((s) => /Queued|Running|Verifying/.test(s))).toBe(true);

  // The PNG, served from the object store.
  const image = page.getByRole("img", { name: /^Verified boxplot/ });
  await expect(image).toBeVisible();
  const response = await page.request.get((await image.getAttribute("src"))!);
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toBe("image/png");
  expect(response.headers()["cache-control"]).toBe("no-store");
  const png = decodePng(await response.body());
  expect([png.width, png.height]).toEqual([1200, 840]);
  expect(png.distinctBytes).toBeGreaterThan(20);
  expect(png.inkShare).toBeGreaterThan(0.01);

  const checks = page.getByRole("list", { name: "Checks" }).getByRole("listitem");
  await expect(checks).toHaveCount(11);
  await expect(checks.filter({ hasText: /^Passed/ })).toHaveCount(11);

  const table = page.getByRole("table", { name: /Per treatment and visit/ });
  const baseline = async (arm: string) =>
    table.getByRole("row").filter({ hasText: arm }).filter({ hasText: "Baseline" }).getByRole("cell").nth(3);
  await expect(await baseline("Placebo")).toHaveText("86");
  // DESIGN §4: 86/84/82 at baseline (Placebo, High Dose, Low Dose).
  await expect(await baseline("Xanomeline High Dose")).toHaveText("84");
  await expect(await baseline("Xanomeline Low Dose")).toHaveText("82");
  await shoot(page, "revision");
});

test("the downloaded script and snapshot reproduce the page's statistics with Rscript", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto(revisionUrl);
  await hydrated(page);
  const dir = mkdtempSync(join(tmpdir(), "adamviz-download-"));
  for (const name of ["script.R", "snapshot.csv"]) {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: `Download ${name}` }).click(),
    ]);
    await download.saveAs(join(dir, name));
  }
  execFileSync("Rscript", ["script.R", "snapshot.csv", "out/"], { cwd: dir, stdio: "pipe" });
  // The evidence bundle: a zip whose manifest is signed by this installation's key.
  const [evidence] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Download evidence" }).click(),
  ]);
  const bundle = join(dir, "evidence.zip");
  await evidence.saveAs(bundle);
  const zip = readFileSync(bundle);
  expect(zip.subarray(0, 2).toString("latin1")).toBe("PK");
  expect(zip.includes(Buffer.from("manifest.dsse.json"))).toBe(true);
  const footer = (await page.getByRole("contentinfo").textContent()) ?? "";
  const fingerprint = footer.match(/sha256:[0-9a-f]{64}/)?.[0];
  expect(fingerprint).toBeTruthy();
  expect(zip.includes(Buffer.from(fingerprint!))).toBe(true);
  // Checked offline with adamviz's own validator. Without a trusted key a bundle only proves
  // that it agrees with itself: CONSISTENT, ORIGIN NOT PROVEN, exit 3. The installation's
  // public key, obtained out of band (here `adamviz key show` on the server's data directory,
  // its fingerprint the footer's): PASS; with the script re-run in the sandbox; with the source
  // commit looked up in this checkout. Then one byte of plot.png flipped inside the zip: FAIL,
  // exit 5, ARTIFACT naming plot.png.
  const adamviz = process.env.ADAMVIZ_BIN ?? join(__dirname, "..", "..", "target", "debug", "adamviz");
  const repository = join(__dirname, "..", "..");
  const keyShown = spawnSync(adamviz, ["key", "show", "--data-dir", process.env.ADAMVIZ_E2E_DATA_DIR!], { encoding: "utf8" });
  expect(keyShown.status, keyShown.stderr).toBe(0);
  expect(keyShown.stdout).toContain(`fingerprint ${fingerprint}`);
  const trustedKey = join(dir, "installation-key.pub");
  writeFileSync(trustedKey, keyShown.stdout);
  const validate = (file: string, ...flags: string[]) =>
    spawnSync(adamviz, ["evidence", "validate", file, ...flags], { encoding: "utf8" });
  const unpinned = validate(bundle);
  expect(unpinned.status, unpinned.stdout + unpinned.stderr).toBe(3);
  expect(unpinned.stdout).toContain("CONSISTENT, ORIGIN NOT PROVEN");
  expect(unpinned.stdout).not.toContain("PASS");
  for (const flags of [[], ["--replay"], ["--repository", repository]]) {
    const run = validate(bundle, "--trusted-key", trustedKey, ...flags);
    expect(run.status, `${flags.join(" ")}\n${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain("PASS");
  }
  const tampered = join(dir, "tampered.zip");
  writeFileSync(tampered, flipStoredByte(zip, "artifacts/plot.png"));
  const failed = validate(tampered, "--trusted-key", trustedKey);
  expect(failed.status, failed.stdout).toBe(5);
  expect(failed.stdout).toContain("FAIL ARTIFACT artifacts/plot.png");
  // The standalone validator an auditor builds from crates/evidence alone gives the same
  // verdicts, exit codes and reports (the JSON report, with its digest, byte for byte).
  const verifier = process.env.ADAMVIZ_VERIFY_BIN ?? join(__dirname, "..", "..", "target", "debug", "adamviz-verify");
  const standalone = (file: string, ...flags: string[]) => spawnSync(verifier, [file, ...flags], { encoding: "utf8" });
  for (const [file, flags] of [
    [bundle, []],
    [bundle, ["--trusted-key", trustedKey]],
    [tampered, ["--trusted-key", trustedKey]],
  ] as Array<[string, string[]]>) {
    const ours = validate(file, ...flags, "--json");
    const theirs = standalone(file, ...flags, "--json");
    expect(theirs.status, theirs.stdout + theirs.stderr).toBe(ours.status);
    expect(theirs.stdout).toBe(ours.stdout);
  }
  const standaloneText = standalone(bundle, "--trusted-key", trustedKey);
  expect(standaloneText.status).toBe(0);
  expect(standaloneText.stdout).toContain("PASS");
  const statistics = JSON.parse(readFileSync(join(dir, "out", "statistics.json"), "utf8"));
  const rows = page.getByRole("table", { name: /Per treatment and visit/ }).getByRole("row");
  const shown = (await rows.allTextContents()).length - 1;
  expect(statistics.cells.length).toBe(shown);
  for (const [index, cell] of (statistics.cells as Array<Record<string, unknown>>).entries()) {
    const cells = rows.nth(index + 1).getByRole("cell");
    await expect(cells.nth(0)).toHaveText(String(cell.treatment));
    await expect(cells.nth(1)).toHaveText(String(cell.visit));
    await expect(cells.nth(2)).toHaveText(String(cell.n));
    await expect(cells.nth(3)).toHaveText(String(cell.n_subjects));
    if (typeof cell.median === "number") await expect(cells.nth(6)).toHaveText(cell.median.toFixed(4));
  }
});

test("the report-ready PDF, SVG and statistics CSV download: the PDF's text holds the footnotes, the SVG is SVG", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto(revisionUrl);
  await hydrated(page);
  const id = revisionUrl.split("/").pop()!;
  const dir = mkdtempSync(join(tmpdir(), "adamviz-report-"));
  const saved: Record<string, string> = {};
  for (const name of ["plot.pdf", "plot.svg", "statistics.csv"]) {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: `Download ${name}` }).click(),
    ]);
    saved[name] = join(dir, name);
    await download.saveAs(saved[name]);
  }
  // The PDF parses (poppler reads its text) and says what the figure is, where it came from
  // and that it was drawn as a Draft; never that it is approved.
  const pdf = readFileSync(saved["plot.pdf"]);
  expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
  const text = execFileSync("pdftotext", ["-layout", saved["plot.pdf"], "-"], { encoding: "utf8" })
    .split(/\s+/)
    .join(" ");
  for (const words of [
    "Population and filters: PARAMCD = ALT",
    "Records per subject and visit:",
    "Dataset: adlbc.xpt (SHA-256",
    "Script SHA-256",
    `Revision ${id}.`,
    "Status when drawn: Draft.",
  ]) {
    expect(text, text).toContain(words);
  }
  expect(text).not.toMatch(/Approved by/);
  // The SVG is an SVG document, as the browser's own XML parser reads it.
  const svg = readFileSync(saved["plot.svg"], "utf8");
  const root = await page.evaluate((source) => {
    const document = new DOMParser().parseFromString(source, "image/svg+xml");
    return document.getElementsByTagName("parsererror").length > 0
      ? "parsererror"
      : `${document.documentElement.namespaceURI} ${document.documentElement.localName}`;
  }, svg);
  expect(root).toBe("http://www.w3.org/2000/svg svg");
  // An SVG is never rendered from the application's origin: it is served as an attachment.
  const served = await page.request.get(`/api/revisions/${id}/files/plot.svg`);
  expect(served.headers()["content-type"]).toBe("image/svg+xml");
  expect(served.headers()["content-disposition"]).toContain("attachment");
  // The CSV is the page's table: one row per cell with a header.
  const csv = readFileSync(saved["statistics.csv"], "utf8").trimEnd().split("\n");
  const rows = page.getByRole("table", { name: /Per treatment and visit/ }).getByRole("row");
  expect(csv.length).toBe(await rows.count());
  expect(csv[0].split(",")).toEqual(expect.arrayContaining(["treatment", "visit", "n_subjects", "median"]));
});

test("refusals: no session gets no PNG; a reviewer gets no Run button and a 403", async ({ page, playwright, baseURL }) => {
  const anonymous = await playwright.request.newContext({ baseURL });
  const id = revisionUrl.split("/").pop()!;
  const png = await anonymous.get(`/api/revisions/${id}/files/plot.png`);
  expect(png.status()).toBe(401);
  const pageWithoutSession = await anonymous.get(`/revisions/${id}`, { maxRedirects: 0 });
  expect(pageWithoutSession.status()).toBe(303);
  await anonymous.dispose();

  await logIn(page, QA);
  await page.goto(revisionUrl);
  await hydrated(page);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await expect(page.getByRole("button", { name: /governed execution/ })).toHaveCount(0);
  const refused = await page.request.post("/api/revisions/run", {
    headers: { Accept: "application/json", Origin: new URL(baseURL!).origin },
    form: { revision_id: id, idempotency_key: "a-reviewer-key-1" },
  });
  expect(refused.status()).toBe(403);
});
