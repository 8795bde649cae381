// Drives the operator console in a real browser (Debian's chromium through
// playwright-core): sign-in, the tools list, trying a tool, the live calls page,
// answering approvals, and signing out.
//
//   CONSOLE_URL=http://127.0.0.1:PORT OPERATOR_TOKEN=… CHROMIUM=/usr/bin/chromium \
//   SCREENSHOTS=/tmp/shots TRY_TOOL=math/add TRY_INPUT='{"a":2,"b":3}' TRY_OUTPUT='5' \
//   TRY_AGENT=lead APPROVE_TOOL=notes/write APPROVE_MARK=… DENY_MARK=… DENY_REASON=… \
//   node console.mjs
//
// Prints `step: …` as it goes, `step: answered` once both waiting calls are answered,
// and `ALL STEPS PASSED` (exit 0), or `FAILED: …` (exit 1). Any console error, page
// error, Content-Security-Policy report or response of status 500 or more fails it.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

const TIMEOUT_MS = 20_000;
const NEW_ROW_TIMEOUT_MS = 10_000;
const APPROVALS_TIMEOUT_MS = 30_000;

function env(name) {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`the environment variable ${name} is not set`);
  return value;
}

function envJson(name) {
  const text = env(name);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not JSON: ${err.message}`);
  }
}

function step(text) {
  console.log(`step: ${text}`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** A CSS attribute value, quoted. */
function quoted(value) {
  return `"${String(value).replace(/["\\]/g, '\\$&').replace(/\n/g, '\\a ')}"`;
}

function readConfig() {
  const config = {
    url: env('CONSOLE_URL').replace(/\/+$/, ''),
    token: env('OPERATOR_TOKEN'),
    chromium: env('CHROMIUM'),
    screenshots: env('SCREENSHOTS'),
    tryTool: env('TRY_TOOL'),
    tryInput: envJson('TRY_INPUT'),
    tryOutput: envJson('TRY_OUTPUT'),
    tryAgent: env('TRY_AGENT'),
    approveTool: env('APPROVE_TOOL'),
    approveMark: env('APPROVE_MARK'),
    denyMark: env('DENY_MARK'),
    denyReason: env('DENY_REASON'),
  };
  check(
    config.tryInput !== null && typeof config.tryInput === 'object' && !Array.isArray(config.tryInput),
    'TRY_INPUT must be a JSON object',
  );
  return config;
}

/** Everything that must not happen on any page, collected as it happens. */
class Problems {
  constructor() {
    this.list = [];
  }

  watch(page, label) {
    page.on('console', (msg) => {
      const text = msg.text();
      if (msg.type() === 'error') this.list.push(`${label}: console error: ${text}`);
      else if (/Content[- ]Security[- ]Policy/i.test(text)) this.list.push(`${label}: CSP: ${text}`);
    });
    page.on('pageerror', (err) => this.list.push(`${label}: page error: ${err.message}`));
    page.on('response', (res) => {
      if (res.status() >= 500) this.list.push(`${label}: ${res.status()} from ${res.request().method()} ${res.url()}`);
    });
    page.on('crash', () => this.list.push(`${label}: the page crashed`));
  }
}

/** Awaits `promise`, saying `what` failed if it does. */
async function expecting(what, promise) {
  try {
    return await promise;
  } catch (err) {
    throw new Error(`${what}: ${err && err.message ? err.message.split('\n')[0] : err}`);
  }
}

function pathOf(page) {
  return new URL(page.url()).pathname;
}

async function screenshot(page, config, name, fullPage) {
  await page.screenshot({ path: path.join(config.screenshots, name), fullPage });
}

// ---------------------------------------------------------------- steps

async function signIn(page, config) {
  step('open /console/tools signed out');
  await page.goto(`${config.url}/console/tools`);
  check(pathOf(page) === '/console/login', `expected the sign-in page, got ${page.url()}`);
  await page.locator('#token').waitFor();
  await screenshot(page, config, 'login.png', false);

  step('sign in with a wrong token');
  await page.fill('#token', `not-an-operator-token-${Date.now()}`);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/console/login' && u.searchParams.get('failed') === '1'),
    page.click('form[action="/console/login"] button[type="submit"]'),
  ]);
  await page.locator('#login-error').waitFor({ state: 'visible' });
  const refusal = (await page.locator('#login-error').textContent()) || '';
  check(refusal.includes('not an operator token'), `unexpected refusal text: ${refusal}`);

  step('sign in with the operator token');
  await page.fill('#token', config.token);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/console/tools'),
    page.click('form[action="/console/login"] button[type="submit"]'),
  ]);
  await page.waitForFunction(() => {
    const el = document.querySelector('#operator');
    return el !== null && el.textContent.trim().length > 0;
  });
  const signedIn = ((await page.locator('#signed-in').textContent()) || '').replace(/\s+/g, ' ').trim();
  check(/^Signed in as \S/.test(signedIn), `the header says "${signedIn}"`);
  step(`signed in: "${signedIn}"`);
}

/** How many tool rows are shown (or hidden). */
function countRows(page, visible) {
  return page.$$eval(
    'tr[data-tool]',
    (rows, wanted) => rows.filter((row) => (row.getClientRects().length > 0) === wanted).length,
    visible,
  );
}

async function searchTools(page, config) {
  step('tools list');
  const rows = page.locator('tr[data-tool]');
  await rows.first().waitFor();
  const total = await rows.count();
  await screenshot(page, config, 'tools.png', true);

  const slash = config.tryTool.lastIndexOf('/');
  const part = slash >= 0 ? config.tryTool.slice(slash + 1) : config.tryTool;
  step(`search tools for "${part}"`);
  await page.fill('#tool-search', part);
  const target = page.locator(`tr[data-tool=${quoted(config.tryTool)}]`);
  await target.waitFor({ state: 'visible' });
  if (total > 1) {
    const hidden = await countRows(page, false);
    if (hidden === 0) {
      // Every tool mentions the term somewhere: show the search filters at all.
      step('every tool matches; search for nothing that exists');
      await page.fill('#tool-search', 'zz-no-tool-is-named-like-this-zz');
      await page.locator('#tools-empty').waitFor({ state: 'visible' });
      check((await countRows(page, true)) === 0, 'a row stayed visible for a search matching nothing');
      await page.fill('#tool-search', part);
      await target.waitFor({ state: 'visible' });
    } else {
      step(`${hidden} of ${total} rows filtered out`);
    }
  }
}

async function openCallsPage(context, problems, config) {
  step('open the calls page in a second page');
  const page = await context.newPage();
  problems.watch(page, 'page 2');
  await page.goto(`${config.url}/console/calls`);
  check(pathOf(page) === '/console/calls', `expected the calls page, got ${page.url()}`);
  await expecting('the live stream did not open', page.locator('#live[data-state="open"]').waitFor());
  // The calls of before are listed (the stream's opening loads them again).
  await page.locator('#calls[aria-busy="false"]').waitFor();
  // Marks this document, to show later that the new row came without a reload.
  await page.evaluate(() => {
    window.consoleTestMark = true;
  });
  return page;
}

async function fillField(page, name, value) {
  const field = page.locator(`[id=${quoted(`field-${name}`)}]`);
  if ((await field.count()) === 0) return false;
  const { tag, type, kind } = await field.evaluate((el) => ({
    tag: el.tagName.toLowerCase(),
    type: el.type || '',
    kind: el.dataset.kind || '',
  }));
  if (type === 'checkbox') {
    await field.setChecked(Boolean(value));
  } else if (tag === 'select') {
    await field.selectOption({ label: typeof value === 'string' ? value : JSON.stringify(value) });
  } else if (kind === 'json' || (value !== null && typeof value === 'object')) {
    await field.fill(JSON.stringify(value));
  } else {
    await field.fill(String(value));
  }
  return true;
}

async function tryTool(page, calls, config) {
  step(`open ${config.tryTool}`);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/console/tool' && u.searchParams.get('name') === config.tryTool),
    page.click(`tr[data-tool=${quoted(config.tryTool)}] a`),
  ]);
  await page.locator('#try-agent').waitFor();
  await page.fill('#try-agent', config.tryAgent);

  const names = Object.keys(config.tryInput);
  let asJson = false;
  for (const name of names) {
    if (!(await page.locator(`[id=${quoted(`field-${name}`)}]`).count())) asJson = true;
  }
  if (asJson || (await page.locator('#try-json').isVisible())) {
    step('fill the input as JSON');
    if (!(await page.locator('#try-json').isVisible())) await page.check('#try-raw');
    await page.fill('#try-json', JSON.stringify(config.tryInput));
  } else {
    step(`fill ${names.length} field(s)`);
    for (const name of names) await fillField(page, name, config.tryInput[name]);
  }

  const rowSelector = `.call-row[data-tool=${quoted(config.tryTool)}][data-outcome="ok"]`;
  const before = await calls.locator(rowSelector).count();

  step(`call ${config.tryTool} as ${config.tryAgent}`);
  await page.click('#try-submit');
  const outcome = page.locator('#try-outcome');
  await expecting('the call showed no outcome', outcome.waitFor({ timeout: 30_000 }));
  const kind = ((await outcome.textContent()) || '').trim();
  if (kind !== 'ok') {
    const shown = ((await page.locator('#try-result').textContent()) || '').replace(/\s+/g, ' ').slice(0, 500);
    throw new Error(`the call ended in "${kind}": ${shown}`);
  }
  const outputText = (await page.locator('#try-output').textContent()) || '';
  let output;
  try {
    output = JSON.parse(outputText);
  } catch (err) {
    throw new Error(`#try-output is not JSON (${err.message}): ${outputText.slice(0, 300)}`);
  }
  check(
    isDeepStrictEqual(output, config.tryOutput),
    `the output ${JSON.stringify(output)} is not the expected ${JSON.stringify(config.tryOutput)}`,
  );
  await screenshot(page, config, 'tool.png', true);
  return { rowSelector, before };
}

async function seeCallLive(calls, config, { rowSelector, before }) {
  step('the call shows on the calls page without a reload');
  await expecting(
    `no new row ${rowSelector} on the calls page within ${NEW_ROW_TIMEOUT_MS / 1000} s`,
    calls.waitForFunction(
      ([selector, count]) => document.querySelectorAll(selector).length > count,
      [rowSelector, before],
      { timeout: NEW_ROW_TIMEOUT_MS },
    ),
  );
  check(await calls.evaluate(() => window.consoleTestMark === true), 'the calls page was reloaded');
  await expecting('no chart on the calls page', calls.locator('#charts svg').first().waitFor());
  await screenshot(calls, config, 'calls.png', true);
}

async function answerApprovals(page, config) {
  step('open the approvals page');
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/console/approvals'),
    page.click('nav[aria-label="Console"] a[href="/console/approvals"]'),
  ]);
  const cardSelector = `article.approval[data-tool=${quoted(config.approveTool)}]`;
  await expecting(
    `two waiting calls of ${config.approveTool} did not show within ${APPROVALS_TIMEOUT_MS / 1000} s`,
    page.waitForFunction((selector) => document.querySelectorAll(selector).length >= 2, cardSelector, {
      timeout: APPROVALS_TIMEOUT_MS,
    }),
  );
  await screenshot(page, config, 'approvals.png', true);

  const cardWith = async (mark) => {
    const card = page.locator(cardSelector).filter({ has: page.locator('pre', { hasText: mark }) });
    const count = await card.count();
    check(count === 1, `expected one waiting call whose input holds "${mark}", found ${count}`);
    const id = await card.getAttribute('data-id');
    check(id, 'a card without data-id');
    return page.locator(`article.approval[data-id=${quoted(id)}]`);
  };

  step('approve the call marked APPROVE_MARK');
  const approved = await cardWith(config.approveMark);
  await approved.locator('.approve').click();
  await approved.waitFor({ state: 'detached' });

  step('deny the call marked DENY_MARK');
  const denied = await cardWith(config.denyMark);
  await denied.locator('.approval-reason').fill(config.denyReason);
  await denied.locator('.deny').click();
  await denied.waitFor({ state: 'detached' });
  const status = ((await page.locator('#approval-status').textContent()) || '').trim();
  check(status.length > 0, '#approval-status says nothing after an answer');
  check(/denied/i.test(status), `#approval-status says "${status}" after a denial`);
  step('answered');
}

async function signOut(page, config) {
  step('sign out');
  await Promise.all([page.waitForURL((u) => u.pathname === '/console/login'), page.click('#sign-out')]);
  step('a page after signing out goes to the sign-in page');
  await page.goto(`${config.url}/console/calls`);
  check(pathOf(page) === '/console/login', `expected the sign-in page after signing out, got ${page.url()}`);
}

// ---------------------------------------------------------------- main

async function main() {
  const config = readConfig();
  fs.mkdirSync(config.screenshots, { recursive: true });
  const problems = new Problems();
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(TIMEOUT_MS);
    context.setDefaultNavigationTimeout(TIMEOUT_MS);
    const page = await context.newPage();
    problems.watch(page, 'page 1');

    await signIn(page, config);
    await searchTools(page, config);
    const calls = await openCallsPage(context, problems, config);
    const made = await tryTool(page, calls, config);
    await seeCallLive(calls, config, made);
    // Page 1 polls the approvals count; it goes before signing out, so that no
    // request of it meets the ended sign-in.
    await page.close();
    await answerApprovals(calls, config);
    await signOut(calls, config);

    if (problems.list.length) throw new Error(`the browser reported problems:\n  ${problems.list.join('\n  ')}`);
  } finally {
    await browser.close().catch(() => {});
  }
}

try {
  await main();
  console.log('ALL STEPS PASSED');
  process.exit(0);
} catch (err) {
  console.log(`FAILED: ${err && err.message ? err.message : String(err)}`);
  process.exit(1);
}
