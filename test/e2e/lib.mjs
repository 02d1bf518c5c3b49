// Helpers for driving the VS Code workbench (code-server) with playwright-core.
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export async function launch() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  // No network beyond code-server itself: fail any other request loudly.
  const external = [];
  await page.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
    if (u.protocol === 'vscode-webview:' || u.protocol === 'vscode-file:') return route.continue();
    external.push(u.href);
    return route.abort();
  });
  return { browser, context, page, external };
}

export async function openWorkbench(page, url) {
  if (url) await page.goto(url);
  await page.locator('.monaco-workbench').first().waitFor({ timeout: 60_000 });
  // The activity bar is there once the workbench has restored.
  await page.locator('.activitybar').first().waitFor({ timeout: 60_000 });
  // Our view container's icon appears once the extension's contributions are registered.
  await page.locator('.activitybar [aria-label^="Consensus Lens"]').first().waitFor({ timeout: 60_000 });
}

/** Runs a command through the command palette by its title (retries while contributions load). */
export async function runCommand(page, title, { attempts = 4 } = {}) {
  for (let i = 1; ; i++) {
    // Keys typed while a webview (an iframe) has the focus may not reach the workbench.
    await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.tagName === 'IFRAME' && document.activeElement.blur());
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input[type="text"]');
    try {
      await input.first().waitFor({ state: 'visible', timeout: i < attempts ? 3_000 : 10_000 });
    } catch (e) {
      if (i >= attempts) throw e;
      continue;
    }
    // Focus the palette's input first: keystrokes must not reach a webview that had the focus.
    await input.first().focus();
    await input.first().press('End');
    // The palette opens with '>' typed; typing (not fill) drives its filtering.
    await page.waitForTimeout(100);
    await page.keyboard.type(title);
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    try {
      await row.waitFor({ timeout: 3_000 });
    } catch (e) {
      if (i >= attempts) throw e;
      continue;
    }
    // Click the matching row: Enter would run whichever row the palette ranked first.
    await row.click();
    return;
  }
}

/** The consensus panel's document (the webview's inner frame). */
export function webview(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

export async function retry(fn, { timeout = 15_000, interval = 200 } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try { return await fn(); } catch (e) { last = e; }
    if (Date.now() > end) throw last;
    await new Promise((r) => setTimeout(r, interval));
  }
}

/**
 * The webview (inner frame) whose document matches `selector`, when several webviews are open
 * (the consensus panel holds `#label-strip`; another panel has its own marker). The returned
 * FrameLocator is pinned to that webview's position among the open ones: look it up again after
 * opening or closing a webview.
 */
export async function webviewWith(page, selector, { timeout = 20_000 } = {}) {
  return retry(async () => {
    const outer = page.locator('iframe.webview.ready');
    const n = await outer.count();
    for (let i = 0; i < n; i++) {
      const inner = page.frameLocator('iframe.webview.ready').nth(i).frameLocator('#active-frame');
      if ((await inner.locator(selector).count()) > 0) return inner;
    }
    throw new Error(`no webview holds ${selector} (${n} open)`);
  }, { timeout });
}

/**
 * Collapses the explorer until a row for each of `names` is rendered. Runs open expanded and the
 * tree renders only the rows in view, and runs keep arriving (each expanded), so Collapse All is
 * clicked again until every named row shows.
 */
export async function collapseUntilRows(page, names, { timeout = 60_000 } = {}) {
  const t0 = Date.now();
  for (;;) {
    await page.locator('.sidebar .composite.title').first().hover({ timeout: 5_000 }).catch(() => undefined);
    await page.locator('.sidebar .title-actions [aria-label="Collapse All"]').first().click({ timeout: 5_000 }).catch(() => undefined);
    try {
      for (const name of names) await page.locator('.sidebar .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 3_000 });
      return;
    } catch (e) {
      if (Date.now() - t0 > timeout) throw e;
    }
  }
}
