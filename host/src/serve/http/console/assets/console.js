/*
 * toolhost operator console: the sign-in page and the signed-in shell
 * (Tools, Tool detail, Calls, Approvals). Plain ES2020, no libraries.
 *
 * Everything the server sends is untrusted: it reaches the page only through
 * textContent, text nodes and attribute setters (see `h` below), never as HTML.
 */
(() => {
  'use strict';

  // ---------------------------------------------------------------- DOM helpers

  const SVG_NS = 'http://www.w3.org/2000/svg';
  // Keys set as DOM properties rather than attributes.
  const PROPERTIES = new Set(['value', 'checked', 'disabled', 'selected', 'indeterminate']);
  const FORBIDDEN = new Set(['style', 'innerHTML', 'outerHTML', 'srcdoc', 'src', 'action', 'formaction']);

  function append(parent, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(parent, child);
      else if (child instanceof Node) parent.appendChild(child);
      else parent.appendChild(document.createTextNode(String(child)));
    }
    return parent;
  }

  function setAttrs(el, attrs) {
    for (const key of Object.keys(attrs)) {
      const value = attrs[key];
      if (value === null || value === undefined || value === false) continue;
      if (FORBIDDEN.has(key)) throw new Error(`refusing to set ${key}`);
      if (key === 'class') {
        el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : String(value));
      } else if (key === 'dataset') {
        for (const name of Object.keys(value)) {
          if (value[name] !== null && value[name] !== undefined) el.dataset[name] = String(value[name]);
        }
      } else if (key === 'on') {
        for (const type of Object.keys(value)) el.addEventListener(type, value[type]);
      } else if (key.startsWith('on')) {
        throw new Error('event handlers go through the `on` map');
      } else if (key === 'href') {
        // Only same-origin paths built by this file, or fragments.
        const href = String(value);
        if (!/^(\/(?![/\\])|#)/.test(href)) throw new Error('refusing a link that is not a same-origin path');
        el.setAttribute('href', href);
      } else if (PROPERTIES.has(key)) {
        el[key] = value;
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }

  /** Creates an HTML element; children are nodes or text (never markup). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    append(el, children);
    if (attrs) setAttrs(el, attrs);
    return el;
  }

  /** Creates an SVG element. */
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    append(el, children);
    if (attrs) setAttrs(el, attrs);
    return el;
  }

  const byId = (id) => document.getElementById(id);
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

  // ---------------------------------------------------------------- formatting

  const pad2 = (n) => String(n).padStart(2, '0');
  const round2 = (x) => String(Math.round(x * 100) / 100);

  function clock(ms) {
    const d = new Date(ms);
    if (Number.isNaN(d.getTime())) return '—';
    return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  }

  function fullTime(ms) {
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? '' : d.toLocaleString();
  }

  function isoTime(ms) {
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }

  function num(v) {
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  }

  function fmtInt(v) {
    const n = num(v);
    return n === null ? '—' : Math.round(n).toLocaleString('en-US');
  }

  /** Microseconds as milliseconds with two decimals. */
  function fmtMs(us) {
    const n = num(us);
    return n === null ? '—' : `${(n / 1000).toFixed(2)} ms`;
  }

  /** Microseconds, shortest readable form. */
  function fmtLatency(us) {
    if (us < 1000) return `${Math.round(us)} µs`;
    if (us < 10000) return `${round2(us / 1000)} ms`;
    if (us < 1e6) return `${Math.round(us / 100) / 10} ms`;
    return `${round2(us / 1e6)} s`;
  }

  function fmtBytes(v) {
    const n = num(v);
    if (n === null) return '—';
    if (n < 1024) return `${n} B`;
    if (n < 1048576) return `${round2(n / 1024)} KiB`;
    if (n < 1073741824) return `${round2(n / 1048576)} MiB`;
    return `${round2(n / 1073741824)} GiB`;
  }

  function fmtTimeout(v) {
    const n = num(v);
    if (n === null) return '—';
    return n < 1000 ? `${n} ms` : `${round2(n / 1000)} s (${fmtInt(n)} ms)`;
  }

  function fmtLeft(ms) {
    if (ms <= 0) return 'expiring…';
    const total = Math.ceil(ms / 1000);
    const m = Math.floor(total / 60);
    const sec = total % 60;
    if (m >= 60) return `${Math.floor(m / 60)} h ${m % 60} min`;
    return m > 0 ? `${m} min ${pad2(sec)} s` : `${sec} s`;
  }

  function fmtAgo(ms) {
    const sec = Math.max(0, Math.floor(ms / 1000));
    if (sec < 60) return `${sec} s ago`;
    const m = Math.floor(sec / 60);
    return m < 60 ? `${m} min ago` : `${Math.floor(m / 60)} h ${m % 60} min ago`;
  }

  function pretty(value) {
    try {
      const text = JSON.stringify(value, null, 2);
      return text === undefined ? String(value) : text;
    } catch (_) {
      return String(value);
    }
  }

  const plural = (n, one, many) => `${fmtInt(n)} ${n === 1 ? one : many || one + 's'}`;

  function firstLine(text) {
    const str = typeof text === 'string' ? text.trim() : '';
    const i = str.indexOf('\n');
    return i === -1 ? str : str.slice(0, i).trim();
  }

  function classToken(value, known, fallback) {
    const v = typeof value === 'string' ? value.toLowerCase() : '';
    return known.includes(v) ? v : fallback;
  }

  function riskBadge(risk) {
    const token = classToken(risk, ['low', 'medium', 'high', 'critical'], 'unknown');
    const text = typeof risk === 'string' && risk ? risk : 'unknown';
    return h('span', { class: ['badge', `risk-${token}`], title: `Risk: ${text}` }, text);
  }

  function outcomeBadge(outcome, attrs) {
    const ok = outcome === 'ok';
    return h('span', Object.assign({ class: ['badge', ok ? 'outcome-ok' : 'outcome-bad'] }, attrs || {}), outcome);
  }

  const HINT_NAMES = {
    read_only: ['read-only', 'not read-only'],
    destructive: ['destructive', 'not destructive'],
    idempotent: ['idempotent', 'not idempotent'],
    open_world: ['open world', 'closed world'],
  };

  /** Tags for the hints whose value is not null; null when there are none. */
  function hintTags(hints) {
    if (!isObject(hints)) return null;
    const tags = [];
    for (const key of Object.keys(hints)) {
      const value = hints[key];
      if (value === null || value === undefined) continue;
      const names = HINT_NAMES[key];
      let text;
      if (names && typeof value === 'boolean') text = value ? names[0] : names[1];
      else text = `${key.replace(/_/g, ' ')}: ${typeof value === 'string' ? value : pretty(value)}`;
      tags.push(h('span', { class: ['tag', value === false ? 'tag-off' : null] }, text));
    }
    return tags.length ? h('span', { class: 'tags' }, tags) : null;
  }

  function toolHref(name) {
    return `/console/tool?name=${encodeURIComponent(name)}`;
  }

  function alertBox(message) {
    return h('p', { class: 'alert', role: 'alert' }, message);
  }

  // ---------------------------------------------------------------- server access

  /** Thrown when the page is leaving (sign-out, 401): callers stay quiet. */
  class Halt extends Error {}

  class ApiError extends Error {
    constructor(message, status) {
      super(message);
      this.status = status;
    }
  }

  const life = { paused: false, requests: new Set(), onPause: [], onResume: [] };
  let csrf = '';

  function pauseAll() {
    life.paused = true;
    for (const ctrl of life.requests) ctrl.abort();
    life.requests.clear();
    for (const fn of life.onPause) fn();
  }

  function resumeAll() {
    life.paused = false;
    for (const fn of life.onResume) fn();
  }

  function toLogin() {
    if (!life.paused) pauseAll();
    location.href = '/console/login';
  }

  function errorMessage(data, res) {
    if (isObject(data) && typeof data.error === 'string' && data.error) return data.error;
    return `The server answered ${res.status}${res.statusText ? ' ' + res.statusText : ''}.`;
  }

  /** GET (no body) or POST (body) JSON; 401 leaves for the sign-in page. */
  async function api(path, body) {
    if (life.paused) throw new Halt('paused');
    const ctrl = new AbortController();
    life.requests.add(ctrl);
    const init = {
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { Accept: 'application/json' },
      signal: ctrl.signal,
    };
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.headers['X-CSRF-Token'] = csrf;
      init.body = JSON.stringify(body);
    }
    let res;
    let text;
    try {
      res = await fetch(path, init);
      text = await res.text();
    } catch (_) {
      if (ctrl.signal.aborted || life.paused) throw new Halt('aborted');
      throw new ApiError('The console server could not be reached.', 0);
    } finally {
      life.requests.delete(ctrl);
    }
    if (life.paused) throw new Halt('paused');
    if (res.status === 401 || (res.redirected && new URL(res.url).pathname === '/console/login')) {
      toLogin();
      throw new Halt('signed out');
    }
    let data;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (_) {
        data = undefined;
      }
    } else {
      data = null;
    }
    if (!res.ok) throw new ApiError(errorMessage(data, res), res.status);
    if (data === undefined) throw new ApiError('The server answered with something that is not JSON.', res.status);
    return data;
  }

  // Background problems (a poll that fails) are shown once each, above the page.
  const problems = new Map();

  function problem(key, message) {
    const area = byId('problems');
    const existing = problems.get(key);
    if (!message) {
      if (existing) {
        existing.remove();
        problems.delete(key);
      }
      return;
    }
    if (existing) {
      if (existing.textContent !== message) existing.textContent = message;
      return;
    }
    if (!area) return;
    const p = alertBox(message);
    area.appendChild(p);
    problems.set(key, p);
  }

  /**
   * Runs `fn` now and then `ms` after each run ends, while the page is not
   * paused. A failure shows as a problem under `key` until a run succeeds.
   */
  function poll(key, ms, fn) {
    let timer = 0;
    let running = false;
    let again = false;
    const run = async () => {
      timer = 0;
      if (running) {
        again = true;
        return;
      }
      if (!life.paused) {
        running = true;
        try {
          await fn();
          problem(key, null);
        } catch (err) {
          if (!(err instanceof Halt)) problem(key, err instanceof ApiError ? err.message : String(err));
        } finally {
          running = false;
        }
      }
      if (again) {
        again = false;
        run();
      } else {
        timer = setTimeout(run, ms);
      }
    };
    run();
    return {
      now() {
        if (running) {
          again = true;
        } else {
          clearTimeout(timer);
          run();
        }
      },
    };
  }

  // ---------------------------------------------------------------- sign-in page

  function bootLogin() {
    const params = new URLSearchParams(location.search);
    const form = byId('login-form');
    const token = byId('token');
    if (params.has('failed')) {
      const slot = byId('login-messages');
      const message = h('p', { role: 'alert', id: 'login-error', class: 'alert' }, 'That is not an operator token.');
      if (slot) slot.appendChild(message);
      else if (form) form.before(message);
      if (token) {
        token.setAttribute('aria-invalid', 'true');
        token.setAttribute('aria-describedby', 'login-error');
      }
    }
    const button = form && form.querySelector('button[type="submit"]');
    if (button) {
      form.addEventListener('submit', () => {
        // Disabled after the submission has been collected, so that it still goes.
        setTimeout(() => {
          button.disabled = true;
          button.textContent = 'Signing in…';
        }, 0);
      });
      // Coming back to the page from the history shows it as it was left.
      window.addEventListener('pageshow', () => {
        button.disabled = false;
        button.textContent = 'Sign in';
      });
    }
  }

  // ---------------------------------------------------------------- shell

  const ROUTES = {
    '/console': 'tools',
    '/console/tools': 'tools',
    '/console/tool': 'tool',
    '/console/calls': 'calls',
    '/console/approvals': 'approvals',
  };

  let baseTitle = 'toolhost console';
  let waitingCount = 0;

  function setTitle(title) {
    baseTitle = title;
    renderTitle();
  }

  function renderTitle() {
    document.title = waitingCount > 0 ? `(${waitingCount}) ${baseTitle}` : baseTitle;
  }

  function setBadge(n) {
    const badge = byId('approvals-count');
    waitingCount = n;
    renderTitle();
    if (!badge) return;
    if (n > 0) {
      badge.replaceChildren(
        h('span', { 'aria-hidden': 'true' }, String(n)),
        h('span', { class: 'sr-only' }, ` (${n} waiting)`),
      );
      badge.hidden = false;
    } else {
      badge.replaceChildren();
      badge.hidden = true;
    }
  }

  function markNav(route) {
    const current = route === 'tool' ? 'tools' : route;
    for (const link of document.querySelectorAll('nav [data-nav]')) {
      if (link.dataset.nav !== current) link.removeAttribute('aria-current');
      else link.setAttribute('aria-current', route === 'tool' ? 'true' : 'page');
    }
  }

  async function signOut(button) {
    button.disabled = true;
    pauseAll();
    try {
      const res = await fetch('/console/logout', {
        method: 'POST',
        credentials: 'same-origin',
        cache: 'no-store',
        headers: { 'X-CSRF-Token': csrf },
      });
      if (res.ok || res.status === 401) {
        location.href = '/console/login';
        return;
      }
      let data = null;
      try {
        data = await res.json();
      } catch (_) {
        data = null;
      }
      throw new ApiError(errorMessage(data, res), res.status);
    } catch (err) {
      resumeAll();
      button.disabled = false;
      const message = err instanceof ApiError ? err.message : 'The console server could not be reached.';
      problem('sign-out', `Could not sign out: ${message}`);
    }
  }

  async function bootApp() {
    const path = location.pathname.replace(/\/+$/, '') || '/';
    const route = ROUTES[path] || 'missing';
    const page = byId('page');
    markNav(route);
    const signOutButton = byId('sign-out');
    if (signOutButton) signOutButton.addEventListener('click', () => signOut(signOutButton));

    let session;
    try {
      session = await api('/console/api/session');
    } catch (err) {
      if (err instanceof Halt) return;
      page.replaceChildren(h('h1', null, 'toolhost console'), alertBox(`The console could not start: ${err.message}`));
      return;
    }
    csrf = typeof session.csrf === 'string' ? session.csrf : '';
    const operator = byId('operator');
    if (operator) operator.textContent = typeof session.operator === 'string' ? session.operator : '';
    const signedIn = byId('signed-in');
    if (signedIn) signedIn.hidden = false;

    if (route !== 'approvals') {
      poll('approvals-count', 2000, async () => {
        const data = await api('/console/api/approvals');
        setBadge(Array.isArray(data.approvals) ? data.approvals.length : 0);
      });
    }

    switch (route) {
      case 'tools':
        pageTools(page);
        break;
      case 'tool':
        pageTool(page);
        break;
      case 'calls':
        pageCalls(page);
        break;
      case 'approvals':
        pageApprovals(page, session);
        break;
      default:
        setTitle('Not found — toolhost console');
        page.replaceChildren(
          h('h1', null, 'Page not found'),
          h('p', null, 'The console has no page here. Go to ', h('a', { href: '/console/tools' }, 'Tools'), '.'),
        );
    }
  }

  // ---------------------------------------------------------------- Tools

  function pageTools(root) {
    setTitle('Tools — toolhost console');
    const params = new URLSearchParams(location.search);
    const search = h('input', {
      type: 'search',
      id: 'tool-search',
      'aria-label': 'Search tools',
      'aria-controls': 'tools-table',
      placeholder: 'Filter by name, description, namespace, source or layer',
      autocomplete: 'off',
      spellcheck: 'false',
      value: params.get('q') || '',
    });
    const count = h('p', { id: 'tool-count', class: 'muted', 'aria-live': 'polite' });
    const summary = h('p', { class: 'muted' });
    const body = h('div', { id: 'tools-body' }, h('p', { class: 'muted' }, 'Loading tools…'));
    root.replaceChildren(
      h('div', { class: 'page-head' }, h('h1', null, 'Tools'), summary),
      h('div', { class: 'toolbar', role: 'search' }, search, count),
      body,
    );

    let rows = [];
    let empty = null;
    let table = null;
    let total = 0;
    let last = '';

    const applyFilter = () => {
      const terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const row of rows) {
        const match = terms.every((t) => row.hay.includes(t));
        row.tr.hidden = !match;
        if (match) shown += 1;
      }
      if (table) table.hidden = shown === 0;
      if (empty) {
        empty.hidden = shown > 0 || total === 0;
        if (!empty.hidden) empty.textContent = `No tool matches “${search.value.trim()}”.`;
      }
      count.textContent = terms.length ? `Showing ${fmtInt(shown)} of ${plural(total, 'tool')}` : plural(total, 'tool');
    };

    search.addEventListener('input', () => {
      applyFilter();
      const url = new URL(location.href);
      if (search.value) url.searchParams.set('q', search.value);
      else url.searchParams.delete('q');
      history.replaceState(null, '', url.pathname + url.search);
    });

    const render = (data) => {
      const tools = Array.isArray(data.tools) ? data.tools.filter(isObject).slice() : [];
      tools.sort((a, b) => String(a.name).localeCompare(String(b.name)));
      const layers = Array.isArray(data.layers) ? data.layers.filter(isObject) : [];
      total = tools.length;
      summary.textContent =
        `${plural(tools.length, 'tool')} from ${plural(layers.length, 'layer')}` +
        (num(data.generation) !== null ? ` · generation ${data.generation}` : '');

      const sections = [];
      const errors = Array.isArray(data.errors) ? data.errors : [];
      if (errors.length) sections.push(loadErrorsSection(errors));
      const upstreams = Array.isArray(data.upstreams) ? data.upstreams.filter(isObject) : [];
      if (upstreams.length) sections.push(upstreamsSection(upstreams));
      const conflicts = Array.isArray(data.conflicts) ? data.conflicts : [];
      if (conflicts.length) sections.push(conflictsSection(conflicts));

      rows = [];
      const tbody = h('tbody');
      for (const tool of tools) {
        const row = toolRow(tool);
        rows.push(row);
        tbody.appendChild(row.tr);
      }
      empty = h('p', { id: 'tools-empty', class: 'empty', hidden: true });
      table = tools.length
        ? h(
            'table',
            { class: 'data tools-table', id: 'tools-table' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Name', 'Source', 'Layer', 'Risk', 'Hints', 'Approval', 'Description'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            tbody,
          )
        : null;
      const tableSection = h(
        'section',
        { class: 'tools-list', 'aria-labelledby': 'tools-h' },
        h('h2', { id: 'tools-h', class: 'sr-only' }, 'Tool list'),
        table || h('p', { class: 'empty' }, 'No tools are loaded.'),
        empty,
      );
      sections.push(tableSection);
      if (layers.length) sections.push(layersSection(layers));
      body.replaceChildren(...sections);
    };

    poll('tools', 10000, async () => {
      const data = await api('/console/api/tools');
      const key = JSON.stringify(data);
      if (key === last) return;
      last = key;
      render(isObject(data) ? data : {});
      applyFilter();
    });
  }

  function toolRow(tool) {
    const name = typeof tool.name === 'string' ? tool.name : String(tool.name);
    const slash = name.lastIndexOf('/');
    const namespace = slash > 0 ? name.slice(0, slash) : '';
    const description = typeof tool.description === 'string' ? tool.description : '';
    const overrides = Array.isArray(tool.overrides) ? tool.overrides : [];
    let note = null;
    if (overrides.length) {
      const layers = overrides.map((o) => (isObject(o) && o.layer ? String(o.layer) : '?'));
      note = h(
        'span',
        { class: 'note', title: overrides.map((o) => (isObject(o) && o.file ? `${o.layer}: ${o.file}` : pretty(o))).join('\n') },
        `overrides ${overrides.length} (${layers.join(', ')})`,
      );
    }
    const tr = h(
      'tr',
      { dataset: { tool: name } },
      h('td', { class: 'col-name' }, h('a', { href: toolHref(name) }, h('code', null, name)), note),
      h('td', null, tool.source == null ? '' : String(tool.source)),
      h('td', null, tool.layer == null ? '' : String(tool.layer)),
      h('td', null, riskBadge(tool.risk)),
      h('td', null, hintTags(tool.hints)),
      h('td', null, tool.requires_approval ? 'yes' : ''),
      h('td', { class: 'col-desc' }, h('div', { class: 'truncate', title: description || null }, firstLine(description))),
    );
    const hay = [name, namespace, description, tool.source, tool.layer]
      .filter((x) => typeof x === 'string')
      .join('\n')
      .toLowerCase();
    return { tr, hay };
  }

  function extraFacts(item, skip) {
    if (!isObject(item)) return null;
    const keys = Object.keys(item).filter((k) => !skip.includes(k) && item[k] !== null && item[k] !== undefined);
    if (!keys.length) return null;
    return h(
      'dl',
      { class: 'extra' },
      keys.map((k) => [h('dt', null, k), h('dd', null, typeof item[k] === 'string' ? item[k] : pretty(item[k]))]),
    );
  }

  function loadErrorsSection(errors) {
    return h(
      'section',
      { class: 'panel panel-bad', 'aria-labelledby': 'load-errors-h' },
      h('h2', { id: 'load-errors-h' }, `Load errors (${errors.length})`),
      h(
        'ul',
        { class: 'problem-list' },
        errors.map((e) =>
          isObject(e)
            ? h(
                'li',
                null,
                h('code', { class: 'path' }, e.file == null ? '(no file)' : String(e.file)),
                h('pre', { class: 'message' }, typeof e.error === 'string' ? e.error : pretty(e.error)),
                extraFacts(e, ['file', 'error']),
              )
            : h('li', null, h('pre', { class: 'message' }, pretty(e))),
        ),
      ),
    );
  }

  function upstreamsSection(upstreams) {
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'upstreams-h' },
      h('h2', { id: 'upstreams-h' }, 'Upstream servers'),
      h(
        'table',
        { class: 'data' },
        h('thead', null, h('tr', null, ['Name', 'Layer', 'State', 'Tools', 'Error'].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          null,
          upstreams.map((u) => {
            const state = typeof u.state === 'string' ? u.state : 'unknown';
            const token = classToken(state, ['connecting', 'connected', 'failed'], 'unknown');
            return h(
              'tr',
              { dataset: { upstream: u.name == null ? '' : String(u.name) } },
              h(
                'td',
                null,
                u.name == null ? '' : String(u.name),
                u.namespace != null && u.namespace !== u.name ? h('span', { class: 'muted small block' }, `namespace ${u.namespace}`) : null,
              ),
              h('td', null, u.layer == null ? '' : String(u.layer)),
              h('td', null, h('span', { class: ['badge', `state-${token}`] }, state)),
              h('td', { class: 'num' }, num(u.tools) === null ? '' : fmtInt(u.tools)),
              h('td', { class: 'prewrap' }, u.error == null ? '' : String(u.error)),
            );
          }),
        ),
      ),
    );
  }

  function conflictsSection(conflicts) {
    return h(
      'section',
      { class: 'panel panel-warn', 'aria-labelledby': 'conflicts-h' },
      h('h2', { id: 'conflicts-h' }, `Conflicts (${conflicts.length})`),
      h(
        'ul',
        { class: 'problem-list' },
        conflicts.map((c) =>
          h(
            'li',
            null,
            isObject(c) && (c.name != null || c.full_name != null) ? h('code', null, String(c.name != null ? c.name : c.full_name)) : null,
            h('pre', { class: 'json' }, pretty(c)),
          ),
        ),
      ),
    );
  }

  function layersSection(layers) {
    return h(
      'details',
      { class: 'panel layers' },
      h('summary', null, `Layers (${layers.length})`),
      h(
        'dl',
        { class: 'facts' },
        layers.map((l) => [
          h('dt', null, l.name == null ? '?' : String(l.name)),
          h('dd', null, l.root == null ? h('span', { class: 'muted' }, 'no directory (native tools only)') : h('code', { class: 'path' }, String(l.root))),
        ]),
      ),
    );
  }

  // ---------------------------------------------------------------- Tool detail

  async function pageTool(root) {
    const name = new URLSearchParams(location.search).get('name');
    const back = h('p', { class: 'crumbs' }, h('a', { href: '/console/tools' }, '← All tools'));
    if (!name) {
      setTitle('Tool — toolhost console');
      root.replaceChildren(back, h('h1', null, 'Tool'), alertBox('No tool is named in the address.'));
      return;
    }
    setTitle(`${name} — toolhost console`);
    const heading = h('h1', { class: 'tool-name' }, name);
    root.replaceChildren(back, heading, h('p', { class: 'muted' }, 'Loading…'));
    let data;
    try {
      data = await api(`/console/api/tool?name=${encodeURIComponent(name)}`);
    } catch (err) {
      if (err instanceof Halt) return;
      root.replaceChildren(back, heading, alertBox(err.message));
      return;
    }
    const tool = isObject(data) && isObject(data.tool) ? data.tool : {};
    const limits = isObject(data.limits) ? data.limits : null;
    const agents = Array.isArray(data.agents) ? data.agents.filter((a) => typeof a === 'string') : [];
    const description = typeof tool.description === 'string' ? tool.description : '';

    const parts = [back, heading];
    parts.push(description ? h('p', { class: 'prewrap description' }, description) : h('p', { class: 'muted' }, 'No description.'));

    const hints = hintTags(tool.hints);
    const facts = [
      ['Source', tool.source == null ? '—' : String(tool.source)],
      ['Layer', tool.layer == null ? '—' : String(tool.layer)],
      ['File', tool.file == null ? '—' : h('code', { class: 'path' }, String(tool.file))],
      ['Component hash', tool.component_hash == null ? '—' : h('code', { class: 'hash' }, String(tool.component_hash))],
      ['Risk', riskBadge(tool.risk)],
      ['Hints', hints || 'none'],
      ['Requires approval', tool.requires_approval ? 'yes' : 'no'],
    ];
    if (tool.output_form != null) facts.push(['Output form', String(tool.output_form)]);
    parts.push(
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'facts-h' },
        h('h2', { id: 'facts-h' }, 'Facts'),
        h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
      ),
    );

    if (limits) {
      const known = [
        ['Fuel', fmtInt(limits.fuel), 'fuel'],
        ['Memory', num(limits.memory) === null ? '—' : `${round2(limits.memory / 1048576)} MiB`, 'memory'],
        ['Timeout', fmtTimeout(limits.timeout), 'timeout'],
        ['Max output', fmtBytes(limits.max_output), 'max_output'],
        ['Max log', fmtBytes(limits.max_log), 'max_log'],
      ];
      const rows = known.map(([label, value]) => h('tr', null, h('th', { scope: 'row' }, label), h('td', { class: 'num' }, value)));
      for (const key of Object.keys(limits)) {
        if (known.some((k) => k[2] === key)) continue;
        const v = limits[key];
        rows.push(h('tr', null, h('th', { scope: 'row' }, key), h('td', { class: 'num' }, typeof v === 'number' ? fmtInt(v) : pretty(v))));
      }
      parts.push(
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'limits-h' },
          h('h2', { id: 'limits-h' }, 'Limits'),
          h('table', { class: 'data limits' }, h('tbody', null, rows)),
        ),
      );
    }

    const overrides = Array.isArray(tool.overrides) ? tool.overrides : [];
    parts.push(
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'schemas-h' },
        h('h2', { id: 'schemas-h' }, 'Schemas'),
        h('details', null, h('summary', null, 'Input schema'), h('pre', { class: 'json' }, pretty(tool.input_schema))),
        tool.output_schema == null
          ? h('p', { class: 'muted' }, 'No output schema.')
          : h('details', null, h('summary', null, 'Output schema'), h('pre', { class: 'json' }, pretty(tool.output_schema))),
      ),
    );
    if (overrides.length) {
      parts.push(
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'overrides-h' },
          h('h2', { id: 'overrides-h' }, `Shadowed definitions (${overrides.length})`),
          h(
            'ul',
            { class: 'problem-list' },
            overrides.map((o) =>
              isObject(o)
                ? h(
                    'li',
                    null,
                    h('strong', null, o.layer == null ? '?' : String(o.layer)),
                    o.file == null ? null : [' ', h('code', { class: 'path' }, String(o.file))],
                    extraFacts(o, ['layer', 'file']),
                  )
                : h('li', null, h('pre', { class: 'json' }, pretty(o))),
            ),
          ),
        ),
      );
    }
    parts.push(tryIt(tool, name, agents));
    root.replaceChildren(...parts);
  }

  // ---------------------------------------------------------------- Try it

  function schemaKind(prop) {
    if (Array.isArray(prop.enum) && prop.enum.length) return 'enum';
    let type = prop.type;
    if (Array.isArray(type)) {
      const nonNull = type.filter((t) => t !== 'null');
      type = nonNull.length === 1 ? nonNull[0] : null;
    }
    switch (type) {
      case 'string':
        return 'text';
      case 'integer':
        return 'integer';
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      default:
        return 'json';
    }
  }

  function typeLabel(prop, kind) {
    const bits = [];
    if (kind === 'json') {
      const t = Array.isArray(prop.type) ? prop.type.join(' | ') : prop.type;
      bits.push(t ? `JSON (${t})` : 'JSON');
    } else if (kind === 'enum') {
      bits.push('one of the listed values');
    } else {
      bits.push(kind === 'text' ? 'string' : kind);
    }
    if (num(prop.minimum) !== null) bits.push(`≥ ${prop.minimum}`);
    if (num(prop.maximum) !== null) bits.push(`≤ ${prop.maximum}`);
    if (num(prop.minLength) !== null) bits.push(`at least ${prop.minLength} characters`);
    if (num(prop.maxLength) !== null) bits.push(`at most ${prop.maxLength} characters`);
    if (prop.default !== undefined) bits.push(`default ${pretty(prop.default)}`);
    return bits.join(', ');
  }

  const sameJson = (a, b) => pretty(a) === pretty(b);

  class FieldError extends Error {}

  /** One generated form field: its DOM, and how to read and write its value. */
  function makeField(name, prop, required, index) {
    const p = isObject(prop) ? prop : {};
    const kind = schemaKind(p);
    const id = `field-${name}`;
    const hintId = `try-hint-${index}`;
    const errorId = `try-error-${index}`;
    const description = typeof p.description === 'string' ? p.description : '';
    const hint = h('p', { class: 'hint', id: hintId }, description ? [description, ' · ', typeLabel(p, kind)] : typeLabel(p, kind));
    const error = h('p', { class: 'field-error', id: errorId, hidden: true });
    const label = h('label', { for: id }, name, required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null);
    const common = { id, name, 'aria-describedby': `${hintId} ${errorId}`, dataset: { kind } };
    let control;
    const enumValues = kind === 'enum' ? p.enum : [];

    switch (kind) {
      case 'text':
        control = h('input', Object.assign({ type: 'text', required, autocomplete: 'off', spellcheck: 'false' }, common));
        if (num(p.maxLength) !== null) control.maxLength = p.maxLength;
        if (typeof p.default === 'string') control.placeholder = p.default;
        break;
      case 'integer':
      case 'number':
        control = h('input', Object.assign({ type: 'number', required, step: kind === 'integer' ? '1' : 'any', inputmode: kind === 'integer' ? 'numeric' : 'decimal' }, common));
        if (num(p.minimum) !== null) control.min = String(p.minimum);
        if (num(p.maximum) !== null) control.max = String(p.maximum);
        if (num(p.default) !== null) control.placeholder = String(p.default);
        break;
      case 'boolean':
        // Never `required`: a required checkbox would have to be ticked.
        control = h('input', Object.assign({ type: 'checkbox', checked: p.default === true }, common));
        break;
      case 'enum': {
        const blank = required ? '— choose —' : p.default !== undefined ? `(default: ${pretty(p.default)})` : '(none)';
        control = h(
          'select',
          Object.assign({ required }, common),
          h('option', { value: '' }, blank),
          enumValues.map((v, i) => h('option', { value: String(i) }, typeof v === 'string' ? v : pretty(v))),
        );
        break;
      }
      default:
        control = h('textarea', Object.assign({ rows: 3, required, spellcheck: 'false', class: 'mono', placeholder: p.default !== undefined ? pretty(p.default) : 'JSON' }, common));
    }

    const wrap =
      kind === 'boolean'
        ? h('div', { class: 'field field-check' }, h('div', { class: 'check-line' }, control, label), hint, error)
        : h('div', { class: 'field' }, label, control, hint, error);

    const setError = (message) => {
      error.textContent = message || '';
      error.hidden = !message;
      if (message) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
    };

    /** {present, value}; throws FieldError when the text does not make a value. */
    const read = () => {
      switch (kind) {
        case 'text':
          return control.value === '' ? { present: false } : { present: true, value: control.value };
        case 'integer':
        case 'number': {
          if (control.validity.badInput) throw new FieldError('Enter a number.');
          const text = control.value.trim();
          if (text === '') return { present: false };
          const n = Number(text);
          if (!Number.isFinite(n)) throw new FieldError('Enter a number.');
          if (kind === 'integer' && !Number.isInteger(n)) throw new FieldError('Enter a whole number.');
          return { present: true, value: n };
        }
        case 'boolean':
          return { present: true, value: control.checked };
        case 'enum':
          return control.value === '' ? { present: false } : { present: true, value: enumValues[Number(control.value)] };
        default: {
          const text = control.value.trim();
          if (text === '') return { present: false };
          try {
            return { present: true, value: JSON.parse(text) };
          } catch (err) {
            throw new FieldError(`This is not valid JSON: ${err.message}`);
          }
        }
      }
    };

    /** Whether `value` can be shown in this field without changing it. */
    const fits = (value) => {
      switch (kind) {
        case 'text':
          return typeof value === 'string';
        case 'integer':
          return Number.isInteger(value);
        case 'number':
          return typeof value === 'number' && Number.isFinite(value);
        case 'boolean':
          return typeof value === 'boolean';
        case 'enum':
          return enumValues.some((v) => sameJson(v, value));
        default:
          return true;
      }
    };

    const write = (present, value) => {
      switch (kind) {
        case 'boolean':
          control.checked = present ? value === true : p.default === true;
          break;
        case 'enum':
          control.value = present ? String(enumValues.findIndex((v) => sameJson(v, value))) : '';
          break;
        case 'json':
          control.value = present ? pretty(value) : '';
          break;
        default:
          control.value = present ? String(value) : '';
      }
    };

    return { name, kind, required, wrap, control, setError, read, fits, write };
  }

  function tryIt(tool, toolName, agents) {
    const schema = isObject(tool.input_schema) ? tool.input_schema : {};
    const props = isObject(schema.properties) ? schema.properties : null;
    const formable = schema.type === 'object' || (schema.type === undefined && props !== null);
    const requiredNames = Array.isArray(schema.required) ? schema.required.map(String) : [];
    const fields = formable && props ? Object.keys(props).map((k, i) => makeField(k, props[k], requiredNames.includes(k), i)) : [];

    const agentInput = h('input', {
      id: 'try-agent',
      name: 'agent',
      list: 'known-agents',
      required: true,
      autocomplete: 'off',
      spellcheck: 'false',
      value: agents[0] || '',
      'aria-describedby': 'try-agent-hint',
    });
    const agentField = h(
      'div',
      { class: 'field' },
      h('label', { for: 'try-agent' }, 'Call as agent'),
      agentInput,
      h('datalist', { id: 'known-agents' }, agents.map((a) => h('option', { value: a }))),
      h('p', { class: 'hint', id: 'try-agent-hint' }, agents.length ? `Known agents: ${agents.join(', ')}` : 'No agent is configured by name.'),
    );

    const fieldset = h(
      'fieldset',
      { class: 'fields', id: 'try-fields' },
      h('legend', null, 'Input'),
      fields.length ? fields.map((f) => f.wrap) : h('p', { class: 'muted' }, formable ? 'This tool takes no input fields.' : 'The input schema is not an object: write the input as JSON.'),
    );

    const jsonError = h('p', { class: 'field-error', id: 'try-json-error', hidden: true });
    const jsonArea = h('textarea', {
      id: 'try-json',
      name: 'input',
      rows: 10,
      class: 'mono',
      spellcheck: 'false',
      'aria-describedby': 'try-json-error',
    });
    const jsonField = h('div', { class: 'field', id: 'try-json-field', hidden: true }, h('label', { for: 'try-json' }, 'Input (JSON)'), jsonArea, jsonError);

    const rawToggle = h('input', { type: 'checkbox', id: 'try-raw' });
    const rawLine = h('div', { class: 'check-line raw-toggle' }, rawToggle, h('label', { for: 'try-raw' }, 'Edit as JSON'));

    const formError = h('div', { id: 'try-form-error' });
    const submit = h('button', { type: 'submit', id: 'try-submit', class: 'btn btn-primary' }, 'Call');
    const result = h('section', { id: 'try-result', 'aria-live': 'polite', 'aria-labelledby': 'try-result-h' }, h('h3', { id: 'try-result-h', class: 'sr-only' }, 'Result'));
    const form = h('form', { id: 'try-it' }, agentField, rawLine, fieldset, jsonField, formError, h('div', { class: 'actions' }, submit));

    const setJsonError = (message) => {
      jsonError.textContent = message || '';
      jsonError.hidden = !message;
      if (message) jsonArea.setAttribute('aria-invalid', 'true');
      else jsonArea.removeAttribute('aria-invalid');
    };

    const setRaw = (raw) => {
      rawToggle.checked = raw;
      fieldset.hidden = raw;
      fieldset.disabled = raw; // hidden controls must not block validation
      jsonField.hidden = !raw;
      jsonArea.disabled = !raw;
      if (!raw) setJsonError(null);
    };

    /**
     * The input from the fields, or null after marking the fields in error. Empty
     * required fields are errors only when `strict` (submitting, not switching views).
     */
    const collect = (strict) => {
      const input = {};
      let firstBad = null;
      for (const f of fields) {
        f.setError(null);
        try {
          const r = f.read();
          if (r.present) input[f.name] = r.value;
          else if (strict && f.required && f.kind !== 'boolean') throw new FieldError('This field is required.');
        } catch (err) {
          if (!(err instanceof FieldError)) throw err;
          f.setError(err.message);
          if (!firstBad) firstBad = f.control;
        }
      }
      if (firstBad) {
        firstBad.focus();
        return null;
      }
      return input;
    };

    rawToggle.addEventListener('change', () => {
      formError.replaceChildren();
      if (rawToggle.checked) {
        const input = collect(false);
        if (input === null) {
          rawToggle.checked = false;
          formError.replaceChildren(alertBox('Fix the marked fields before editing as JSON.'));
          return;
        }
        jsonArea.value = pretty(input);
        setRaw(true);
        return;
      }
      let value;
      try {
        value = JSON.parse(jsonArea.value);
      } catch (err) {
        rawToggle.checked = true;
        setJsonError(`This is not valid JSON: ${err.message}`);
        return;
      }
      if (!isObject(value)) {
        rawToggle.checked = true;
        setJsonError('The form can only show a JSON object; keep editing as JSON.');
        return;
      }
      const unknown = Object.keys(value).filter((k) => !fields.some((f) => f.name === k));
      const misfits = fields.filter((f) => Object.prototype.hasOwnProperty.call(value, f.name) && !f.fits(value[f.name]));
      if (unknown.length || misfits.length) {
        rawToggle.checked = true;
        const bits = [];
        if (unknown.length) bits.push(`not in the schema: ${unknown.join(', ')}`);
        if (misfits.length) bits.push(`of another type than the form expects: ${misfits.map((f) => f.name).join(', ')}`);
        setJsonError(`The form cannot show these keys (${bits.join('; ')}); keep editing as JSON.`);
        return;
      }
      for (const f of fields) {
        const present = Object.prototype.hasOwnProperty.call(value, f.name);
        f.write(present, value[f.name]);
        f.setError(null);
      }
      setRaw(false);
    });

    let busy = false;
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (busy) return;
      formError.replaceChildren();
      let input;
      if (rawToggle.checked) {
        setJsonError(null);
        try {
          input = JSON.parse(jsonArea.value);
        } catch (err) {
          setJsonError(`This is not valid JSON: ${err.message}`);
          jsonArea.focus();
          return;
        }
      } else {
        input = collect(true);
        if (input === null) return;
      }
      const agent = agentInput.value.trim();
      if (!agent) {
        formError.replaceChildren(alertBox('Name the agent to call as.'));
        agentInput.focus();
        return;
      }

      busy = true;
      submit.disabled = true;
      submit.textContent = 'Waiting…';
      const waiting = [h('p', { class: 'waiting' }, `Waiting for ${toolName} to answer…`)];
      if (tool.requires_approval) {
        waiting.push(
          h(
            'p',
            { class: 'muted' },
            'This tool needs approval: answer it on the ',
            h('a', { href: '/console/approvals', target: '_blank', rel: 'noopener' }, 'Approvals page (opens a new tab)'),
            '.',
          ),
        );
      }
      result.replaceChildren(result.firstChild, ...waiting);
      try {
        const report = await api('/console/api/call', { tool: toolName, agent, input });
        result.replaceChildren(result.firstChild, ...renderReport(isObject(report) ? report : {}));
      } catch (err) {
        if (err instanceof Halt) return;
        result.replaceChildren(result.firstChild, alertBox(err.message));
      } finally {
        busy = false;
        submit.disabled = false;
        submit.textContent = 'Call';
      }
    });

    setRaw(!formable);
    if (!formable) {
      rawLine.hidden = true;
      jsonArea.value = '{}';
    }

    return h(
      'section',
      { class: 'panel try', 'aria-labelledby': 'try-h' },
      h('h2', { id: 'try-h' }, 'Try it'),
      h('p', { class: 'muted' }, 'Calls the tool for real, as the named agent, with that agent’s grants and limits.'),
      form,
      result,
    );
  }

  function renderReport(report) {
    const error = isObject(report.error) ? report.error : null;
    const ok = !error;
    const kind = ok ? 'ok' : String(error.kind || 'error');
    const out = [];
    const stats = [
      ['Duration', fmtMs(report.duration_us)],
      ['Fuel', fmtInt(report.fuel_consumed)],
      ['Input', fmtBytes(report.input_bytes)],
      ['Output', fmtBytes(report.output_bytes)],
    ];
    out.push(
      h(
        'div',
        { class: 'report-head' },
        outcomeBadge(kind, { id: 'try-outcome' }),
        h('dl', { class: 'inline-facts' }, stats.map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, v)))),
      ),
    );
    if (error) {
      out.push(h('p', { class: 'report-error' }, h('strong', null, kind), ': ', error.message == null ? '' : String(error.message)));
    }
    if (typeof report.hidden_because === 'string' && report.hidden_because) {
      out.push(h('p', { class: 'report-note' }, h('strong', null, 'Hidden from this agent: '), report.hidden_because));
    }
    if (ok || (report.output !== null && report.output !== undefined)) {
      out.push(h('h3', null, 'Output'), h('pre', { class: 'json', id: 'try-output' }, pretty(report.output === undefined ? null : report.output)));
    }
    if (isObject(report.approval)) {
      const a = report.approval;
      const who = a.answered_by == null ? 'nobody' : String(a.answered_by);
      const line = [a.approved ? 'Approved' : 'Not approved', ` (answered by ${who}${a.operator ? `, operator ${a.operator}` : ''})`];
      if (a.asked_because) line.push(`; asked because ${a.asked_because}`);
      if (a.denied_because) line.push(`; denied because ${a.denied_because}`);
      out.push(h('p', { class: 'approval-line' }, h('strong', null, 'Approval: '), line.join('')));
    }
    out.push(h('details', { class: 'full-report' }, h('summary', null, 'Full report'), h('pre', { class: 'json' }, pretty(report))));
    return out;
  }

  // ---------------------------------------------------------------- Calls

  const OUTCOMES = [
    ['', 'Any outcome'],
    ['ok', 'ok'],
    ['errors', 'Any error'],
    ['permission_denied', 'permission_denied'],
    ['input_invalid', 'input_invalid'],
    ['timeout', 'timeout'],
    ['tool_error', 'tool_error'],
  ];
  const MAX_ROWS = 500;

  function pageCalls(root) {
    setTitle('Calls — toolhost console');
    const params = new URLSearchParams(location.search);
    const initialOutcome = params.get('outcome') || '';
    const outcomes = OUTCOMES.slice();
    if (initialOutcome && !outcomes.some(([v]) => v === initialOutcome)) outcomes.push([initialOutcome, initialOutcome]);

    const fAgent = h('input', { id: 'filter-agent', type: 'text', autocomplete: 'off', spellcheck: 'false', value: params.get('agent') || '' });
    const fTool = h('input', { id: 'filter-tool', type: 'text', autocomplete: 'off', spellcheck: 'false', value: params.get('tool') || '' });
    const fOutcome = h('select', { id: 'filter-outcome', value: initialOutcome }, outcomes.map(([v, t]) => h('option', { value: v }, t)));
    const liveText = h('span', { class: 'live-text' }, 'Connecting…');
    const live = h('span', { id: 'live', class: 'live', role: 'status', dataset: { state: 'connecting' } }, h('span', { class: 'dot', 'aria-hidden': 'true' }), liveText);

    const chartsBody = h('div', { class: 'charts-body' }, h('p', { class: 'muted' }, 'Loading…'));
    const charts = h('section', { id: 'charts', class: 'panel', 'aria-labelledby': 'charts-h' }, h('h2', { id: 'charts-h' }, 'Last hour'), chartsBody);

    const tbody = h('tbody');
    const countLine = h('p', { class: 'muted', id: 'calls-count' });
    const emptyLine = h('p', { class: 'empty', id: 'calls-empty', hidden: true });
    const listError = h('div', { id: 'calls-error' });
    const table = h(
      'table',
      { class: 'data calls-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col', class: 'col-expand' }, h('span', { class: 'sr-only' }, 'Details')),
          ['Time', 'Agent', 'Tool', 'Outcome', 'Duration', 'Fuel'].map((t) => h('th', { scope: 'col', class: t === 'Duration' || t === 'Fuel' ? 'num' : null }, t)),
        ),
      ),
      tbody,
    );

    root.replaceChildren(
      h('div', { class: 'page-head' }, h('h1', null, 'Calls'), live),
      h(
        'form',
        { class: 'filters', role: 'search', 'aria-label': 'Filter calls' },
        h('div', { class: 'field' }, h('label', { for: 'filter-agent' }, 'Agent'), fAgent),
        h('div', { class: 'field' }, h('label', { for: 'filter-tool' }, 'Tool'), fTool),
        h('div', { class: 'field' }, h('label', { for: 'filter-outcome' }, 'Outcome'), fOutcome),
      ),
      charts,
      h(
        'section',
        { id: 'calls', 'aria-labelledby': 'calls-h', 'aria-busy': 'true' },
        h('h2', { id: 'calls-h' }, 'Calls, newest first'),
        countLine,
        listError,
        table,
        emptyLine,
      ),
    );
    root.querySelector('form.filters').addEventListener('submit', (ev) => ev.preventDefault());

    // ---- the table
    let rows = []; // newest first: {key, record, tr, detail, button}
    const keys = new Set();
    const expanded = new Set();
    let detailSeq = 0;

    const updateCount = () => {
      countLine.textContent = rows.length ? `${plural(rows.length, 'call')}${rows.length >= MAX_ROWS ? ' (the newest 500)' : ''}` : '';
      emptyLine.hidden = rows.length > 0;
      emptyLine.textContent = filters().some(Boolean) ? 'No call matches these filters.' : 'No calls yet.';
      table.hidden = rows.length === 0;
    };

    const toggle = (row) => {
      const open = row.button.getAttribute('aria-expanded') !== 'true';
      if (open && !row.detail) {
        detailSeq += 1;
        const id = `call-detail-${detailSeq}`;
        row.detail = h('tr', { class: 'call-detail', id }, h('td', { colspan: 7 }, h('pre', { class: 'json' }, pretty(row.record))));
        row.button.setAttribute('aria-controls', id);
        row.tr.after(row.detail);
      }
      if (row.detail) row.detail.hidden = !open;
      row.button.setAttribute('aria-expanded', String(open));
      if (open) expanded.add(row.key);
      else expanded.delete(row.key);
    };

    const makeRow = (record, key) => {
      const caller = isObject(record.caller) ? record.caller : {};
      const agent = caller.agent == null ? '' : String(caller.agent);
      const tool = record.tool != null ? String(record.tool) : record.requested != null ? String(record.requested) : '';
      const outcome = typeof record.outcome === 'string' && record.outcome ? record.outcome : record.error ? 'error' : 'ok';
      const ts = num(record.timestamp_ms);
      const button = h('button', { type: 'button', class: 'expander', 'aria-expanded': 'false', 'aria-label': 'Full record', title: 'Show the full record' }, h('span', { class: 'chev', 'aria-hidden': 'true' }, '▸'));
      const errorText = record.error == null ? '' : typeof record.error === 'string' ? record.error : pretty(record.error);
      const tr = h(
        'tr',
        { class: 'call-row', dataset: { tool, agent, outcome } },
        h('td', { class: 'col-expand' }, button),
        h('td', { class: 'nowrap' }, ts === null ? '—' : h('time', { datetime: isoTime(ts), title: fullTime(ts) }, clock(ts))),
        h('td', null, agent, caller.session ? h('span', { class: 'muted small block truncate session', title: `session ${caller.session}` }, String(caller.session)) : null),
        h(
          'td',
          null,
          h('code', null, tool),
          record.tool != null && record.requested != null && record.requested !== record.tool ? h('span', { class: 'muted small block' }, `asked for ${record.requested}`) : null,
        ),
        h('td', null, outcomeBadge(outcome), errorText ? h('span', { class: 'call-error truncate', title: errorText }, errorText) : null),
        h('td', { class: 'num' }, fmtMs(record.duration_us)),
        h('td', { class: 'num' }, fmtInt(record.fuel_consumed)),
      );
      const row = { key, record, tr, detail: null, button };
      button.addEventListener('click', () => toggle(row));
      if (expanded.has(key)) toggle(row);
      return row;
    };

    const dropOldest = () => {
      while (rows.length > MAX_ROWS) {
        const old = rows.pop();
        old.tr.remove();
        if (old.detail) old.detail.remove();
        keys.delete(old.key);
        expanded.delete(old.key);
      }
    };

    const addLive = (record) => {
      const key = JSON.stringify(record);
      if (keys.has(key)) return;
      keys.add(key);
      const row = makeRow(record, key);
      row.tr.classList.add('fresh');
      tbody.prepend(row.tr);
      if (row.detail) row.tr.after(row.detail);
      rows.unshift(row);
      dropOldest();
      updateCount();
    };

    /** Replaces the table with `records` (oldest first) plus `extra` (arrival order). */
    const rebuild = (records, extra) => {
      const all = [];
      const seen = new Set();
      for (const r of records.concat(extra)) {
        if (!isObject(r)) continue;
        const key = JSON.stringify(r);
        if (seen.has(key)) continue;
        seen.add(key);
        all.push([key, r]);
      }
      const newest = all.slice(-MAX_ROWS).reverse();
      keys.clear();
      rows = [];
      const frag = document.createDocumentFragment();
      for (const [key, r] of newest) {
        keys.add(key);
        const row = makeRow(r, key);
        rows.push(row);
        frag.appendChild(row.tr);
        if (row.detail) frag.appendChild(row.detail);
      }
      for (const key of expanded) if (!keys.has(key)) expanded.delete(key);
      tbody.replaceChildren(frag);
      updateCount();
    };

    // ---- filters, list and stream
    function filters() {
      return [fAgent.value.trim(), fTool.value.trim(), fOutcome.value];
    }

    const queryString = () => {
      const [agent, tool, outcome] = filters();
      const q = new URLSearchParams();
      if (agent) q.set('agent', agent);
      if (tool) q.set('tool', tool);
      if (outcome) q.set('outcome', outcome);
      const text = q.toString();
      return text ? `?${text}` : '';
    };

    const setLive = (state) => {
      live.dataset.state = state;
      liveText.textContent = state === 'open' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Disconnected';
      live.title = state === 'open' ? 'New calls appear as they happen.' : state === 'connecting' ? 'Connecting to the live stream…' : 'The live stream is closed; retrying.';
    };

    let generation = 0;
    let source = null;
    let retryTimer = 0;
    let loadSeq = 0;
    let loading = 0; // loads in flight
    let buffer = []; // stream events received while a load is in flight

    const setBusy = () => {
      const section = byId('calls');
      if (section) section.setAttribute('aria-busy', String(loading > 0));
    };

    const load = async (gen, qs) => {
      const seq = ++loadSeq;
      loading += 1;
      setBusy();
      try {
        const data = await api(`/console/api/calls${qs}`);
        if (gen !== generation || seq !== loadSeq) return;
        listError.replaceChildren();
        rebuild(Array.isArray(data.calls) ? data.calls : [], buffer);
        buffer = [];
      } catch (err) {
        if (err instanceof Halt || gen !== generation) return;
        listError.replaceChildren(alertBox(`Could not load calls: ${err.message}`));
      } finally {
        loading -= 1;
        if (loading === 0 && buffer.length && gen === generation) {
          const pending = buffer;
          buffer = [];
          for (const r of pending) addLive(r);
        }
        setBusy();
      }
    };

    const closeStream = () => {
      clearTimeout(retryTimer);
      retryTimer = 0;
      if (source) {
        source.close();
        source = null;
      }
    };

    const start = () => {
      closeStream();
      const gen = ++generation;
      const qs = queryString();
      buffer = [];
      rebuild([], []);
      countLine.textContent = 'Loading…';
      emptyLine.hidden = true;
      if (life.paused) return;
      setLive('connecting');
      const es = new EventSource(`/console/api/calls/stream${qs}`, { withCredentials: false });
      source = es;
      es.addEventListener('open', () => {
        if (gen !== generation) return;
        setLive('open');
        // Fills whatever happened while the stream was not connected.
        load(gen, qs);
      });
      es.addEventListener('call', (ev) => {
        if (gen !== generation) return;
        let record;
        try {
          record = JSON.parse(ev.data);
        } catch (_) {
          return;
        }
        if (!isObject(record)) return;
        if (loading > 0) buffer.push(record);
        else addLive(record);
        requestStats();
      });
      es.addEventListener('error', () => {
        if (gen !== generation) return;
        if (es.readyState === EventSource.CLOSED) {
          // The browser gave up (the session may have ended): check, then retry.
          setLive('closed');
          es.close();
          source = null;
          retryTimer = setTimeout(async () => {
            retryTimer = 0;
            if (gen !== generation || life.paused) return;
            try {
              await api('/console/api/session');
            } catch (err) {
              if (err instanceof Halt) return;
            }
            if (gen === generation) start();
          }, 5000);
        } else {
          setLive('connecting');
        }
      });
      load(gen, qs);
    };

    const syncUrl = () => {
      const qs = queryString();
      history.replaceState(null, '', `/console/calls${qs}`);
    };

    let debounce = 0;
    const changed = (delay) => {
      clearTimeout(debounce);
      debounce = setTimeout(() => {
        syncUrl();
        start();
      }, delay);
    };
    let lastFilters = filters().join('\u0000');
    const onFilterInput = (delay) => () => {
      const now = filters().join('\u0000');
      if (now === lastFilters) return;
      lastFilters = now;
      changed(delay);
    };
    fAgent.addEventListener('input', onFilterInput(300));
    fTool.addEventListener('input', onFilterInput(300));
    fOutcome.addEventListener('change', onFilterInput(0));

    life.onPause.push(() => {
      generation += 1;
      closeStream();
      setLive('closed');
    });
    life.onResume.push(() => start());

    // ---- charts
    let statsLast = 0;
    let statsTimer = 0;
    const statsPoll = poll('stats', 10000, async () => {
      statsLast = Date.now();
      const data = await api('/console/api/stats');
      renderCharts(chartsBody, isObject(data) ? data : {});
    });
    function requestStats() {
      if (statsTimer) return;
      const wait = Math.max(0, statsLast + 2000 - Date.now());
      statsTimer = setTimeout(() => {
        statsTimer = 0;
        statsPoll.now();
      }, wait);
    }

    start();
  }

  function sum(list) {
    let total = 0;
    for (const v of list) total += v;
    return total;
  }

  function numbers(list, length) {
    const out = new Array(length).fill(0);
    if (!Array.isArray(list)) return out;
    for (let i = 0; i < length; i++) {
      const v = list[i];
      out[i] = typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
    }
    return out;
  }

  const CHART_W = 180;
  const CHART_H = 36;
  const r2 = (x) => Math.round(x * 100) / 100;

  function renderCharts(container, stats) {
    const tools = Array.isArray(stats.tools) ? stats.tools.filter(isObject) : [];
    const minuteMs = num(stats.minute_ms) || 60000;
    const endMs = num(stats.end_ms) || Date.now();
    if (!tools.length) {
      container.replaceChildren(h('p', { class: 'muted', id: 'charts-empty' }, 'No calls in the last hour.'));
      return;
    }
    tools.sort((a, b) => String(a.tool).localeCompare(String(b.tool)));
    const rows = tools.map((t) => {
      const name = t.tool == null ? '?' : String(t.tool);
      const n = Math.max(Array.isArray(t.calls) ? t.calls.length : 0, 1);
      const calls = numbers(t.calls, n);
      const errors = numbers(t.errors, n).map((e, i) => Math.min(e, calls[i]));
      const mean = numbers(t.mean_us, n);
      const totalCalls = sum(calls);
      const totalErrors = sum(errors);
      let weighted = 0;
      for (let i = 0; i < n; i++) weighted += mean[i] * calls[i];
      const hourMean = totalCalls ? weighted / totalCalls : 0;
      const summary =
        `${name}: ${plural(totalCalls, 'call')} in the last hour, ${plural(totalErrors, 'error')}` +
        (totalCalls ? `, mean ${fmtLatency(hourMean)}` : '');
      return h(
        'tr',
        { dataset: { chartTool: name } },
        h('th', { scope: 'row' }, h('code', null, name)),
        h('td', { class: 'num' }, fmtInt(totalCalls)),
        h('td', { class: ['num', totalErrors ? 'has-errors' : null] }, fmtInt(totalErrors)),
        h('td', { class: 'chart-cell' }, barsChart(summary, calls, errors, minuteMs, endMs)),
        h('td', { class: 'chart-cell' }, latencyChart(name, calls, mean, minuteMs, endMs)),
      );
    });
    container.replaceChildren(
      h(
        'table',
        { class: 'data charts-table' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, 'Tool'),
            h('th', { scope: 'col', class: 'num' }, 'Calls'),
            h('th', { scope: 'col', class: 'num' }, 'Errors'),
            h('th', { scope: 'col' }, 'Calls per minute', h('span', { class: 'legend' }, h('span', { class: 'key key-ok', 'aria-hidden': 'true' }), 'ok', h('span', { class: 'key key-err', 'aria-hidden': 'true' }), 'error')),
            h('th', { scope: 'col' }, 'Mean latency per minute'),
          ),
        ),
        h('tbody', null, rows),
      ),
    );
  }

  function minuteLabel(i, n, minuteMs, endMs) {
    return clock(endMs - (n - i) * minuteMs).slice(0, 5);
  }

  function chartFrame(label) {
    return s(
      'svg',
      {
        class: 'chart',
        width: CHART_W,
        height: CHART_H,
        viewBox: `0 0 ${CHART_W} ${CHART_H}`,
        role: 'img',
        'aria-label': label,
        focusable: 'false',
      },
      s('line', { class: 'axis', x1: 0, y1: CHART_H - 0.5, x2: CHART_W, y2: CHART_H - 0.5 }),
    );
  }

  function barsChart(label, calls, errors, minuteMs, endMs) {
    const n = calls.length;
    const slot = CHART_W / n;
    const width = Math.max(1, slot - 1);
    const max = Math.max(1, ...calls);
    const frame = chartFrame(label);
    for (let i = 0; i < n; i++) {
      const c = calls[i];
      if (!c) continue;
      const e = errors[i];
      const total = Math.max(1.5, (c / max) * (CHART_H - 2));
      const errH = e ? Math.max(1, (total * e) / c) : 0;
      const x = r2(i * slot);
      const g = s('g', null, s('title', null, `${minuteLabel(i, n, minuteMs, endMs)}: ${plural(c, 'call')}, ${plural(e, 'error')}`));
      if (total - errH > 0) g.appendChild(s('rect', { class: 'bar-ok', x, y: r2(CHART_H - total), width: r2(width), height: r2(total - errH) }));
      if (errH > 0) g.appendChild(s('rect', { class: 'bar-err', x, y: r2(CHART_H - errH), width: r2(width), height: r2(errH) }));
      frame.appendChild(g);
    }
    return frame;
  }

  function latencyChart(name, calls, mean, minuteMs, endMs) {
    const n = mean.length;
    const slot = CHART_W / n;
    const present = mean.map((v, i) => v > 0 && calls[i] > 0);
    const values = mean.filter((v, i) => present[i]);
    const label = values.length
      ? `${name}: mean latency per minute, from ${fmtLatency(Math.min(...values))} to ${fmtLatency(Math.max(...values))}`
      : `${name}: no latency to show in the last hour`;
    const frame = chartFrame(label);
    if (!values.length) return frame;
    const max = Math.max(...values);
    const point = (i) => [r2(i * slot + slot / 2), r2(CHART_H - 3 - (mean[i] / max) * (CHART_H - 6))];
    // One line through the minutes that had calls (the bars show which), and a dot on the latest.
    const shown = [];
    for (let i = 0; i < n; i++) if (present[i]) shown.push(i);
    if (shown.length > 1) frame.appendChild(s('polyline', { class: 'line', points: shown.map((i) => point(i).join(',')).join(' ') }));
    const [lastX, lastY] = point(shown[shown.length - 1]);
    frame.appendChild(s('circle', { class: 'dot', cx: lastX, cy: lastY, r: 2 }));
    // Invisible hover targets with the value of each minute.
    for (let i = 0; i < n; i++) {
      if (!present[i]) continue;
      frame.appendChild(
        s(
          'rect',
          { class: 'hit', x: r2(i * slot), y: 0, width: r2(slot), height: CHART_H },
          s('title', null, `${minuteLabel(i, n, minuteMs, endMs)}: mean ${fmtLatency(mean[i])} over ${plural(calls[i], 'call')}`),
        ),
      );
    }
    return frame;
  }

  // ---------------------------------------------------------------- Approvals

  const APPROVE_VIA = {
    console: 'Calls that need approval wait here until an operator answers or they expire.',
    client: 'This server asks the calling MCP client to approve calls, so calls are not expected to wait here.',
    both: 'This server asks both the calling MCP client and this console; the first answer counts.',
  };

  function prettyInput(text) {
    if (typeof text !== 'string') return pretty(text);
    try {
      return pretty(JSON.parse(text));
    } catch (_) {
      return text;
    }
  }

  function pageApprovals(root, session) {
    setTitle('Approvals — toolhost console');
    const heading = h('h1', { tabindex: '-1' }, 'Approvals');
    const mode = APPROVE_VIA[session.approve_via];
    const status = h('p', { id: 'approval-status', role: 'status', class: 'status' });
    const empty = h('p', { id: 'no-approvals', class: 'empty', hidden: true }, 'No call is waiting for approval.');
    const loadingLine = h('p', { class: 'muted' }, 'Loading…');
    const list = h('div', { class: 'approvals', id: 'approval-list' });
    root.replaceChildren(h('div', { class: 'page-head' }, heading), mode ? h('p', { class: 'muted' }, mode) : null, status, loadingLine, empty, list);

    const cards = new Map(); // id -> card
    const answered = new Set();
    let seq = 0;

    const refreshEmpty = () => {
      empty.hidden = cards.size > 0;
      setBadge(cards.size);
    };

    const removeCard = (card) => {
      const active = document.activeElement;
      let focusTarget = null;
      if (active && card.el.contains(active)) {
        const next = card.el.nextElementSibling || card.el.previousElementSibling;
        focusTarget = next ? next.querySelector('.approval-reason') : heading;
      }
      card.el.remove();
      cards.delete(card.id);
      if (focusTarget) focusTarget.focus();
      refreshEmpty();
    };

    const tick = (card, now) => {
      const left = num(card.item.expires_ms);
      if (left !== null) {
        const ms = left - now;
        card.left.textContent = fmtLeft(ms);
        card.left.classList.toggle('urgent', ms < 30000);
      }
      const asked = num(card.item.asked_ms);
      if (asked !== null) card.ago.textContent = ` (${fmtAgo(now - asked)})`;
    };

    const answer = async (card, approve) => {
      if (card.busy) return;
      card.busy = true;
      card.approve.disabled = true;
      card.deny.disabled = true;
      card.error.replaceChildren();
      const reason = card.reason.value.trim();
      const tool = card.item.tool == null ? 'the call' : String(card.item.tool);
      const who = card.agent ? ` for ${card.agent}` : '';
      try {
        await api(`/console/api/approvals/${encodeURIComponent(card.id)}`, { approve, reason });
        answered.add(card.id);
        removeCard(card);
        status.textContent = `${approve ? 'Approved' : 'Denied'} ${tool}${who}.`;
      } catch (err) {
        if (err instanceof Halt) return;
        if (err.status === 404 || err.status === 409) {
          answered.add(card.id);
          removeCard(card);
          status.textContent = `${tool}${who} was not answered here: ${err.message}`;
          return;
        }
        card.busy = false;
        card.approve.disabled = false;
        card.deny.disabled = false;
        card.error.replaceChildren(alertBox(err.message));
      }
    };

    const makeCard = (item) => {
      seq += 1;
      const caller = isObject(item.caller) ? item.caller : {};
      const agent = caller.agent == null ? '' : String(caller.agent);
      const tool = item.tool == null ? '' : String(item.tool);
      const headId = `approval-h-${seq}`;
      const reasonId = `approval-reason-${seq}`;
      const reason = h('input', { type: 'text', class: 'approval-reason', id: reasonId, autocomplete: 'off', name: 'reason' });
      const approve = h('button', { type: 'button', class: 'btn approve' }, 'Approve');
      const deny = h('button', { type: 'button', class: 'btn deny' }, 'Deny');
      const left = h('span', { class: 'left' });
      const ago = h('span', { class: 'muted' });
      const error = h('div', { class: 'card-error' });
      const asked = num(item.asked_ms);
      const el = h(
        'article',
        { class: 'approval', dataset: { id: item.id, tool }, 'aria-labelledby': headId },
        h('header', { class: 'approval-head' }, h('h2', { id: headId }, h('code', null, tool), agent ? h('span', { class: 'for' }, ` for ${agent}`) : null), riskBadge(item.risk)),
        h(
          'dl',
          { class: 'facts' },
          h('dt', null, 'Agent'),
          h('dd', null, agent || '—', caller.session ? h('span', { class: 'muted' }, ` (session ${caller.session})`) : null),
          h('dt', null, 'Reason'),
          h('dd', { class: 'prewrap' }, item.reason == null ? '—' : String(item.reason)),
          h('dt', null, 'Asked'),
          h('dd', null, asked === null ? '—' : h('time', { datetime: isoTime(asked), title: fullTime(asked) }, clock(asked)), ago),
          h('dt', null, 'Time left'),
          h('dd', null, left),
        ),
        h('div', { class: 'approval-input' }, h('h3', null, 'Input'), h('pre', { class: 'json' }, prettyInput(item.input))),
        h(
          'div',
          { class: 'answer' },
          h('div', { class: 'field' }, h('label', { for: reasonId }, 'Reason (optional)'), reason),
          h('div', { class: 'buttons' }, approve, deny),
        ),
        error,
      );
      const card = { id: item.id, item, el, reason, approve, deny, left, ago, error, agent, asked: asked === null ? Infinity : asked, busy: false };
      approve.addEventListener('click', () => answer(card, true));
      deny.addEventListener('click', () => answer(card, false));
      reason.addEventListener('keydown', (ev) => {
        // Enter approves only with a modifier, so a stray Enter answers nothing.
        if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
          ev.preventDefault();
          answer(card, true);
        }
      });
      tick(card, Date.now());
      return card;
    };

    const sync = (items) => {
      const seen = new Set();
      for (const item of items) {
        if (!isObject(item) || typeof item.id !== 'string') continue;
        seen.add(item.id);
        if (answered.has(item.id) || cards.has(item.id)) continue;
        const card = makeCard(item);
        let before = null;
        for (const other of cards.values()) {
          if (other.asked > card.asked && (!before || other.asked < before.asked)) before = other;
        }
        list.insertBefore(card.el, before ? before.el : null);
        cards.set(card.id, card);
      }
      for (const card of Array.from(cards.values())) {
        if (seen.has(card.id) || card.busy) continue;
        const tool = card.item.tool == null ? 'A call' : String(card.item.tool);
        // Says why only when the operator was at it.
        const attended = card.reason.value.trim() !== '' || card.el.contains(document.activeElement);
        removeCard(card);
        if (attended) {
          status.textContent = `${tool}${card.agent ? ` for ${card.agent}` : ''} is no longer waiting: it was answered elsewhere, expired or ended.`;
        }
      }
      for (const id of Array.from(answered)) if (!seen.has(id)) answered.delete(id);
      loadingLine.hidden = true;
      refreshEmpty();
    };

    poll('approvals', 1500, async () => {
      const data = await api('/console/api/approvals');
      sync(isObject(data) && Array.isArray(data.approvals) ? data.approvals : []);
    });
    setInterval(() => {
      const now = Date.now();
      for (const card of cards.values()) tick(card, now);
    }, 1000);
  }

  // ---------------------------------------------------------------- start

  function boot() {
    const page = document.body && document.body.dataset.page;
    if (page === 'login') bootLogin();
    else if (page === 'app') bootApp();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
