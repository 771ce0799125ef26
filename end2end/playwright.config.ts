// Playwright drives Debian's Chromium (/usr/bin/chromium) against the real adamviz server, built
// beforehand by `cargo leptos build` (see the Makefile's `e2e` target).
import { defineConfig } from "@playwright/test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const repoRoot = resolve(__dirname, "..");
const port = process.env.ADAMVIZ_E2E_PORT ?? "3100";
const binary = process.env.ADAMVIZ_BIN ?? join(repoRoot, "target", "debug", "adamviz");
// One fresh data directory per run; worker processes inherit it through the environment.
process.env.ADAMVIZ_E2E_DATA_DIR ??= mkdtempSync(join(tmpdir(), "adamviz-e2e-"));

export default defineConfig({
  testDir: "./tests",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  // The accounts tests create the first admin and the other accounts the rest log in with.
  projects: [
    { name: "accounts", testMatch: /accounts\.spec\.ts/ },
    { name: "app", testMatch: /(smoke|datasets)\.spec\.ts/, dependencies: ["accounts"] },
    // The governed flow uses the pilot the datasets tests uploaded.
    { name: "flow", testMatch: /(flow|keyboard)\.spec\.ts/, dependencies: ["app"], timeout: 240_000 },
    // Approval, reproduction, history and compare, on the revision the flow ran to Verified.
    { name: "review", testMatch: /review\.spec\.ts/, dependencies: ["flow"], timeout: 300_000 },
    { name: "a11y", testMatch: /a11y\.spec\.ts/, dependencies: ["review"] },
    // Figure sets: every chemistry parameter of the pilot, run and signed (after the review's
    // signatures, so that quinn's signing session here is a new one).
    { name: "sets", testMatch: /[\\/]sets\.spec\.ts$/, dependencies: ["a11y"], timeout: 480_000 },
  ],
  webServer: {
    // stderr is also kept in the data directory: the first-start setup link is read from it.
    command: `bash -c '"${binary}" serve --addr 127.0.0.1:${port} --data-dir "${process.env.ADAMVIZ_E2E_DATA_DIR}" 2> >(tee "${process.env.ADAMVIZ_E2E_DATA_DIR}/server.stderr" >&2)'`,
    cwd: repoRoot, // the site root in Leptos.toml is relative to the repository
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
