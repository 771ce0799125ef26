// A second person and a second run, in a real browser with real R: the ALT revision the flow
// tests ran to Verified is approved by a reviewer (a wrong password first: refused and in the
// log), the signature shows with name, date and time, and meaning; the author gets no Sign
// form and the server says 403; the revision reproduces; the downloaded bundle validates PASS
// under the installation's key (obtained out of band: `adamviz key show` on the server)
// with the approval and the reproduction in it; the history shows it Approved; the author
// revises it with one visit fewer, runs the revision to Verified and compares the two.
import { test, expect, type Page } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUTHOR, QA, hydrated, logIn, shoot, tabTo } from "./people";

test.describe.configure({ mode: "serial" });

let revisionUrl = "";
let revisedUrl = "";
const VISITS = "Which visits are shown, in which order?";

async function waitForVerified(page: Page): Promise<void> {
  const status = page.getByRole("status").filter({ hasText: "Status:" });
  await expect(status).toContainText("Verified", { timeout: 180_000 });
}

/// The work-list section of the home page whose heading starts with `heading`.
function workSection(page: Page, heading: string) {
  return page.getByRole("region", { name: new RegExp(`^${heading} \\(\\d+\\)$`) });
}

test("the reviewer signs the verified ALT revision after one wrong password", async ({ page }) => {
  await logIn(page, QA);
  // The reviewer's home page lists the Verified ALT revision as waiting for their signature.
  await page.goto("/");
  await hydrated(page);
  const waiting = workSection(page, "Waiting for my signature");
  await expect(waiting.getByRole("link").filter({ hasText: "adlbc.xpt" }).first()).toBeVisible();
  await expect(workSection(page, "Sent back to me")).toContainText("Nothing here.");
  await page.goto("/revisions?status=verified");
  await hydrated(page);
  const row = page.getByRole("row").filter({ hasText: "adlbc.xpt" }).filter({ hasText: "ALT" }).first();
  await row.getByRole("link").first().click();
  await expect(page).toHaveURL(/\/revisions\/rev-[0-9a-f]{32}$/);
  revisionUrl = page.url();
  await hydrated(page);
  const form = page.getByRole("form", { name: "Sign this revision" });
  await expect(form.getByRole("group", { name: "Decision" }).getByLabel("Approve")).toBeChecked();
  // The first try with the keyboard alone: the meaning with Space, the password, Enter.
  const responsible = form.getByRole("group", { name: /^Meaning of your signature/ }).getByLabel("Responsible");
  await tabTo(page, form.getByRole("group", { name: /^Meaning of your signature/ }).getByLabel("Reviewed"));
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await expect(responsible).toBeChecked();
  // The first signature of the session takes the user name as well as the password.
  await tabTo(page, form.getByLabel("User name (first signature of this session)"));
  await page.keyboard.type(QA.name);
  await tabTo(page, form.getByLabel("Password (re-enter it to sign)"));
  await page.keyboard.type("not quinn's password");
  await page.keyboard.press("Enter");
  await expect(form.getByRole("alert")).toContainText("the password is not right");
  await shoot(page, "sign-800", 800);
  await expect(page.getByText("Verified", { exact: true }).first()).toBeVisible();

  await form.getByLabel("User name (first signature of this session)").fill(QA.name);
  await form.getByLabel("Password (re-enter it to sign)").fill(QA.password);
  await form.getByRole("button", { name: "Sign" }).click();
  const signature = page.getByRole("region", { name: "Signatures" }).getByRole("listitem").first();
  await expect(signature).toContainText("Approved");
  await expect(signature).toContainText(/signed by quinn on \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC; meaning: responsible/);
  await expect(page.getByText(/Approved version 3 · rev-/)).toBeVisible();
  // Both attempts are in the security log, shown with the revision.
  await page.getByText(/Signing attempts \(2\)/).click();
  const attempts = page.getByRole("list", { name: "Signing attempts" }).getByRole("listitem");
  await expect(attempts.nth(0)).toContainText("quinn — refused: wrong password");
  await expect(attempts.nth(1)).toContainText("quinn — signed: approved (responsible)");
  await shoot(page, "approved");
});

test("the author cannot sign: no form, and the server answers 403", async ({ page, baseURL }) => {
  await logIn(page, AUTHOR);
  await page.goto(revisionUrl);
  await hydrated(page);
  await expect(page.getByRole("heading", { name: "Signatures" })).toBeVisible();
  await expect(page.getByRole("form", { name: "Sign this revision" })).toHaveCount(0);
  const refused = await page.request.post("/api/revisions/sign", {
    headers: { Accept: "application/json", Origin: new URL(baseURL!).origin },
    form: {
      revision_id: revisionUrl.split("/").pop()!,
      decision: "approved",
      meaning: "approved",
      password: AUTHOR.password,
      evidence_head: "",
    },
  });
  expect(refused.status()).toBe(403);
});

test("the revision reproduces and the bundle validates with its approval and reproduction", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto(revisionUrl);
  await hydrated(page);
  await page.getByRole("button", { name: "Reproduce" }).click();
  const reproduction = page.getByRole("region", { name: "Reproductions" }).getByRole("listitem").first();
  await expect(reproduction).toContainText("Reproduced", { timeout: 120_000 });
  await expect(reproduction).toContainText("by ann: the analytical hash matches; same environment, the image hash matches too");

  const dir = mkdtempSync(join(tmpdir(), "adamviz-review-"));
  const [evidence] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Download evidence" }).click(),
  ]);
  const bundle = join(dir, "evidence.zip");
  await evidence.saveAs(bundle);
  const adamviz = process.env.ADAMVIZ_BIN ?? join(__dirname, "..", "..", "target", "debug", "adamviz");
  // The installation's public key, out of band: `adamviz key show` on the server's data
  // directory. PASS only under it.
  const shown = spawnSync(adamviz, ["key", "show", "--data-dir", process.env.ADAMVIZ_E2E_DATA_DIR!], { encoding: "utf8" });
  expect(shown.status, shown.stderr).toBe(0);
  const trustedKey = join(dir, "installation-key.pub");
  writeFileSync(trustedKey, shown.stdout);
  const run = spawnSync(adamviz, ["evidence", "validate", bundle, "--trusted-key", trustedKey], { encoding: "utf8" });
  expect(run.status, run.stdout + run.stderr).toBe(0);
  expect(run.stdout).toContain("PASS");
  expect(run.stdout).toMatch(/signature: approved by quinn \(quinn\) at \S+, meaning: responsible/);
  expect(run.stdout).toContain("1 reproduction records reproduce the analytical hash");

  // The auditor's way in: the Evidence section lists it, Approved by quinn, with its bundle.
  await page.goto("/evidence");
  await hydrated(page);
  const id = revisionUrl.split("/").pop()!;
  const row = page.getByRole("table", { name: "Approved revisions, newest first" }).getByRole("row").filter({ hasText: "quinn" }).first();
  await expect(row.getByRole("link", { name: `Download evidence of ${id.slice(0, 16)}` })).toBeVisible();
  await expect(page.getByText(/This installation signs bundles with the key sha256:[0-9a-f]{64}/)).toBeVisible();
});

test("the history shows it Approved; a revision with one visit fewer is run and compared", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.goto("/revisions");
  await hydrated(page);
  await page.getByLabel("Status").selectOption("approved");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/status=approved/);
  const approved = page.getByRole("row").filter({ hasText: "adlbc.xpt" }).first();
  await expect(approved).toContainText("Approved");
  await expect(approved).toContainText("quinn");
  await shoot(page, "history");

  // Revise: the draft starts from the approved revision's answers; one visit fewer.
  await page.goto(revisionUrl);
  await hydrated(page);
  await page.getByRole("link", { name: "Revise" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Draft: ALT over time by arm");
  await expect(page.getByText(/^Revising/)).toBeVisible();
  await hydrated(page);
  const visits = page.getByRole("group", { name: VISITS }).getByRole("checkbox");
  const kept: string[] = [];
  for (const box of await visits.all()) if (await box.isChecked()) kept.push(await box.inputValue());
  const dropped = kept[kept.length - 1];
  await page.getByRole("group", { name: VISITS }).getByLabel(dropped, { exact: true }).uncheck();
  await page.getByRole("button", { name: "Confirm and create the revision" }).click();
  await expect(page).toHaveURL(/\/revisions\/rev-[0-9a-f]{32}$/);
  expect(page.url()).not.toBe(revisionUrl);
  await hydrated(page);
  await expect(page.getByRole("region", { name: "Lineage" })).toContainText("Revises");
  await page.getByRole("button", { name: "Run governed execution" }).click();
  await waitForVerified(page);
  // Its own approval is still to come; the parent keeps its own.
  await expect(page.getByRole("region", { name: "Signatures" })).toContainText("Not signed yet");
  revisedUrl = page.url();

  await page.getByRole("link", { name: "Compare with the revision it revises" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Compare revisions");
  await hydrated(page);
  const answers = page.getByRole("table", { name: "Answers that differ" });
  const visitRow = answers.getByRole("row").filter({ hasText: "Visits (axis order)" });
  await expect(visitRow).toContainText(dropped);
  await expect(answers.getByRole("row")).toHaveCount(2);
  const cells = page.getByRole("table", { name: /First, second and the difference/ });
  // The dropped visit's cells exist only in the first revision; the others differ by zero.
  const droppedRow = cells.getByRole("row").filter({ hasText: dropped }).first();
  // The first column says what happened to the cell; then treatment, visit, n first, n second …
  await expect(droppedRow.getByRole("cell").nth(0)).toHaveText("dropped cell");
  await expect(droppedRow.getByRole("cell").nth(4)).toHaveText("–");
  const baseline = cells.getByRole("row").filter({ hasText: "Baseline" }).first();
  await expect(baseline.getByRole("cell").nth(0)).toHaveText("same");
  await expect(baseline.getByRole("cell").nth(7)).toHaveText("+0.0000");
  const images = page.getByRole("img", { name: /the verified plot of rev-/ });
  await expect(images).toHaveCount(2);
  for (const image of await images.all()) {
    await expect(image).toBeVisible();
    expect(await image.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(1200);
  }
  await shoot(page, "compare");
});

test("a reviewer sends the revision back: the author's home lists it as sent back, the reviewer's no longer as waiting", async ({ page, browser }) => {
  const revisedId = revisedUrl.split("/").pop()!;
  const approvedId = revisionUrl.split("/").pop()!;
  await logIn(page, QA);
  await page.goto("/");
  await hydrated(page);
  await expect(workSection(page, "Waiting for my signature").locator(`a[href="/revisions/${revisedId}"]`)).toBeVisible();
  await expect(workSection(page, "Recently approved").locator(`a[href="/revisions/${approvedId}"]`)).toBeVisible();
  await page.goto(revisedUrl);
  await hydrated(page);
  const form = page.getByRole("form", { name: "Sign this revision" });
  await form.getByRole("group", { name: "Decision" }).getByLabel("Request changes").check();
  await form.getByLabel("Comment (required to request changes)").fill("Keep every visit: the dropped one is in the SAP.");
  await form.getByLabel("User name (first signature of this session)").fill(QA.name);
  await form.getByLabel("Password (re-enter it to sign)").fill(QA.password);
  await form.getByRole("button", { name: "Sign" }).click();
  await expect(page.getByRole("region", { name: "Signatures" }).getByRole("listitem").first()).toContainText("Changes requested");
  await page.goto("/");
  await hydrated(page);
  await expect(workSection(page, "Waiting for my signature").locator(`a[href="/revisions/${revisedId}"]`)).toHaveCount(0);

  const author = await (await browser.newContext()).newPage();
  await logIn(author, AUTHOR);
  await author.goto("/");
  await hydrated(author);
  const sentBack = workSection(author, "Sent back to me");
  await expect(sentBack.locator(`a[href="/revisions/${revisedId}"]`)).toBeVisible();
  await expect(sentBack).toContainText("Verified");
  // An author does not sign: no such section on their page.
  await expect(workSection(author, "Waiting for my signature")).toHaveCount(0);
  await expect(workSection(author, "Recently approved").locator(`a[href="/revisions/${approvedId}"]`)).toBeVisible();
  await shoot(author, "home-work-list");
  await shoot(author, "home-work-list-800", 800);
});
