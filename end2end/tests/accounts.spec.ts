// People in the app, in a real browser against the real server: the setup link makes the first
// admin, who creates an author and reviewers with temporary passwords; each must choose their own
// at the first login; any account changes its password on the Change password page (ending its
// other sessions); each sees only what the role allows; five wrong passwords lock a name; after
// logout the back button shows no private page.
import { test, expect } from "@playwright/test";
import { ADMIN, AUTHOR, QA, REVIEWER, hydrated, logIn, setupLink, shoot } from "./people";

test.describe.configure({ mode: "serial" });

test("a visitor is sent to the login page, and the setup link makes the first admin", async ({ page }) => {
  await page.goto("/datasets");
  await expect(page).toHaveURL(/\/login\?next=\/datasets$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Log in");

  await page.goto(await setupLink());
  await hydrated(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Set up adamviz");
  await page.getByLabel("Administrator name").fill(ADMIN.name);
  await page.getByLabel("Password (at least 12 characters)").fill("too short");
  await page.getByLabel("Password again").fill("too short");
  await page.getByRole("button", { name: "Create the administrator" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "at least 12 characters" })).toBeVisible();

  await page.getByLabel("Password (at least 12 characters)").fill(ADMIN.password);
  await page.getByLabel("Password again").fill(ADMIN.password);
  await page.getByRole("button", { name: "Create the administrator" }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Governed boxplots from ADaM data");
  await expect(page.getByLabel("Account")).toContainText(`${ADMIN.name} (admin)`);

  // The link is spent.
  const again = await page.goto(await setupLink());
  expect(again?.status()).toBe(404);
});

test("the admin creates an author and a reviewer", async ({ page }) => {
  await logIn(page, ADMIN);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Accounts" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Accounts");
  for (const [who, role] of [
    [AUTHOR, "author"],
    [REVIEWER, "reviewer"],
    [QA, "reviewer"],
  ] as const) {
    await page.getByLabel("Name", { exact: true }).fill(who.name);
    await page.getByLabel("Temporary password (at least 12 characters)").fill(who.temporary);
    await page.getByRole("group", { name: "Roles" }).getByLabel(role).check();
    await page.getByRole("button", { name: "Create account" }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: who.name, exact: true }) });
    await expect(row).toContainText(role);
    await expect(row).toContainText("active");
    await expect(row).toContainText("temporary password");
    await page.getByRole("group", { name: "Roles" }).getByLabel(role).uncheck();
  }
  await shoot(page, "accounts");
});

test("the first login with the password the admin set must choose a new one before anything else", async ({ page }) => {
  for (const who of [AUTHOR, REVIEWER, QA]) {
    await page.goto("/login");
    await hydrated(page);
    await page.getByLabel("Name").fill(who.name);
    await page.getByLabel("Password").fill(who.temporary);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page).toHaveURL(/\/account\/password\?required=1$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Change password");
    await expect(page.getByRole("status")).toContainText("Your password was set by an administrator");
    // Nothing else opens: every page leads back here.
    await page.goto("/datasets");
    await expect(page).toHaveURL(/\/account\/password\?required=1$/);
    await hydrated(page);
    // The same rules as ever, each refusal beside its field.
    await page.getByLabel("Current password").fill(who.temporary);
    await page.getByLabel("New password", { exact: true }).fill(who.password);
    await page.getByLabel("New password again").fill("not the same one at all");
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "the two new passwords differ" })).toBeVisible();
    await page.getByLabel("New password again").fill(who.password);
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByLabel("Account")).toContainText(who.name);
    await page.getByRole("button", { name: "Log out" }).click();
    await expect(page).toHaveURL(/\/login$/);
    // The admin's password no longer works.
    await page.getByLabel("Name").fill(who.name);
    await page.getByLabel("Password").fill(who.temporary);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.getByRole("alert")).toContainText("the name or the password is wrong");
  }
});

test("any account changes its own password on the Change password page, and other sessions end", async ({ page, browser }) => {
  // A second browser logged in as ann: it is ended by the change made in the first.
  const other = await browser.newContext();
  const elsewhere = await other.newPage();
  await logIn(elsewhere, AUTHOR);
  await logIn(page, AUTHOR);
  await page.getByLabel("Account").getByRole("link", { name: "Change password" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Change password");
  await hydrated(page);
  await page.getByLabel("Current password").fill("not ann's password");
  await page.getByLabel("New password", { exact: true }).fill("ann's interim password");
  await page.getByLabel("New password again").fill("ann's interim password");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "the current password is not right" })).toBeVisible();
  await page.getByLabel("Current password").fill(AUTHOR.password);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page).toHaveURL(/\/$/);
  // The other session is gone.
  await elsewhere.goto("/datasets");
  await expect(elsewhere).toHaveURL(/\/login\?next=\/datasets$/);
  await other.close();
  // And back to the password the other tests use (through the same page).
  await page.goto("/account/password");
  await hydrated(page);
  await page.getByLabel("Current password").fill("ann's interim password");
  await page.getByLabel("New password", { exact: true }).fill(AUTHOR.password);
  await page.getByLabel("New password again").fill(AUTHOR.password);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page).toHaveURL(/\/$/);
});

test("each role sees only what it may", async ({ page }) => {
  for (const who of [AUTHOR, REVIEWER]) {
    await logIn(page, who);
    const sections = page.getByRole("navigation", { name: "Sections" });
    await expect(sections.getByRole("link", { name: "Datasets" })).toBeVisible();
    await expect(sections.getByRole("link", { name: "Accounts" })).toHaveCount(0);
    const response = await page.goto("/admin/accounts");
    expect(response?.status()).toBe(403);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Not allowed");
    await page.goto("/");
    await hydrated(page);
    await page.getByRole("button", { name: "Log out" }).click();
    await expect(page).toHaveURL(/\/login$/);
  }
});

test("after logout the back button shows no private page", async ({ page }) => {
  await logIn(page, AUTHOR);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Datasets" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Datasets");
  await page.getByRole("button", { name: "Log out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goBack();
  await expect(page).toHaveURL(/\/login\?next=/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Log in");
});

test("five wrong passwords lock the name for fifteen minutes", async ({ page }) => {
  await page.goto("/login");
  await hydrated(page);
  for (let attempt = 1; attempt <= 5; attempt++) {
    await page.getByLabel("Name").fill(REVIEWER.name);
    await page.getByLabel("Password").fill(`wrong password ${attempt}`);
    await page.getByRole("button", { name: "Log in" }).click();
    const expected = attempt < 5 ? "the name or the password is wrong" : "locked for 15 minutes";
    await expect(page.getByRole("alert")).toContainText(expected);
  }
  // Even the right password is refused now.
  await page.getByLabel("Password").fill(REVIEWER.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("alert")).toContainText("locked for 15 minutes");
});

test("without wasm the login form still works, errors included", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/revisions");
  await expect(page).toHaveURL(/\/login\?next=\/revisions$/);
  await page.getByLabel("Name").fill(AUTHOR.name);
  await page.getByLabel("Password").fill("not the password at all");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("alert")).toContainText("the name or the password is wrong");
  await page.getByLabel("Name").fill(AUTHOR.name);
  await page.getByLabel("Password").fill(AUTHOR.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page).toHaveURL(/\/revisions$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Revisions");
  await expect(page.getByLabel("Account")).toContainText(AUTHOR.name);
  await context.close();
});
