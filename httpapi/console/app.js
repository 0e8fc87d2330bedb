// warden console. It speaks the daemon's HTTP API like any other client,
// signing every request with the operator token exactly as httpapi.Sign does
// (see httpapi/auth.go). No framework and no inline code: the page's
// Content-Security-Policy forbids both. Every value that comes from the API is
// put in the page as text, never as HTML, because approvals and feed items
// hold text that an agent chose.
'use strict';

(() => {
  const TOKEN_KEY = 'warden.operatorToken'; // in sessionStorage: this tab only
  const MAX_FEED_ROWS = 500;
  const POLL_MS = 15000; // a safety net; the feed triggers reloads as things happen
  const RECONNECT_MS = 1000;
  const MAX_RECONNECT_MS = 30000;
  const APPROVAL_EVENTS = new Set(['approval_requested', 'approval_answered', 'approval_expired']);

  const $ = (id) => document.getElementById(id);
  const utf8 = new TextEncoder();

  const state = {
    token: '',
    key: null, // a promise of the HMAC key made from token
    id: null, // a promise of token's id, which requests send in its place
    epoch: 0, // bumps at every log in and log out; late answers of an older one are dropped
    kill: false,
    approvalsLoad: 0, // bumps at every load of the approvals, so only the newest renders
    filter: { type: '', severity: '' },
    feed: null, // the AbortController of the feed's stream
    lastSeq: 0,
    timers: [],
    soon: {},
  };

  // el makes an element with a class and a text. Text is always set as text.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // soon runs fn once, shortly, however often it is asked to in the meantime.
  function soon(name, fn) {
    if (state.soon[name]) return;
    state.soon[name] = setTimeout(() => {
      delete state.soon[name];
      fn();
    }, 100);
  }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }

  // --- Signed requests, as httpapi.Sign makes them ---

  function hex(buf) {
    return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  }

  // tokenId returns a promise of the token's public id, as httpapi.TokenID
  // makes it: wdn_<scope>_id_ and the hex of the first 16 bytes of
  // SHA-256("warden-token-id\0" + token). The id is what requests send; the
  // token itself never leaves the page, it only keys the HMAC.
  async function tokenId(token) {
    const m = /^wdn_(agent|operator)_/.exec(token);
    const scope = m ? m[1] : 'unknown'; // login lets no such token through; the daemon would refuse its id
    const sum = await crypto.subtle.digest('SHA-256', utf8.encode('warden-token-id\0' + token));
    return `wdn_${scope}_id_` + hex(sum.slice(0, 16));
  }

  function setToken(token) {
    state.token = token;
    state.epoch++;
    state.key = token
      ? crypto.subtle.importKey('raw', utf8.encode(token), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
      : null;
    state.id = token ? tokenId(token) : null;
  }

  // signedHeaders returns the headers that authenticate one request: the
  // token's id, a timestamp, a fresh nonce, and the HMAC-SHA256 keyed by the
  // token of method, path and query, SHA-256 of the body, timestamp and nonce.
  async function signedHeaders(method, uri, body) {
    const nonceBytes = new Uint8Array(16);
    crypto.getRandomValues(nonceBytes);
    const nonce = hex(nonceBytes); // 32 characters of [0-9a-f]
    const ts = String(Math.floor(Date.now() / 1000));
    const bodyHash = hex(await crypto.subtle.digest('SHA-256', body));
    const text = [method, uri, bodyHash, ts, nonce].join('\n');
    const sig = hex(await crypto.subtle.sign('HMAC', await state.key, utf8.encode(text)));
    return {
      'Authorization': 'Bearer ' + await state.id,
      'X-Warden-Timestamp': ts,
      'X-Warden-Nonce': nonce,
      'X-Warden-Signature': sig,
    };
  }

  // ApiError is an answer other than 2xx, with the daemon's {error, code, hint}.
  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error) || `the daemon answered HTTP ${status}`);
      this.status = status;
      this.hint = (body && body.hint) || '';
    }
  }

  function errorText(e) {
    if (e instanceof ApiError) return e.hint ? `${e.message} (${e.hint})` : e.message;
    return `could not reach the daemon: ${e.message}`;
  }

  // request sends a signed request; payload, when given, is sent as JSON.
  async function request(method, path, payload, signal) {
    const url = new URL(path, location.href);
    const body = payload === undefined ? new Uint8Array(0) : utf8.encode(JSON.stringify(payload));
    // Sign the path and query as the browser sends them: the URL's own serialization.
    const headers = await signedHeaders(method, url.pathname + url.search, body);
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      body: payload === undefined ? undefined : body,
      signal,
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
    if (!res.ok) {
      let data = null;
      try { data = await res.json(); } catch (_) { /* not JSON */ }
      throw new ApiError(res.status, data);
    }
    return res;
  }

  async function api(method, path, payload) {
    return (await request(method, path, payload)).json();
  }

  // --- Log in and out ---

  async function login(token) {
    const error = $('login-error');
    error.textContent = '';
    if (!window.isSecureContext || !window.crypto || !crypto.subtle) {
      error.textContent = 'This page cannot sign requests here: open the console on http://127.0.0.1 or over HTTPS.';
      return;
    }
    if (!token.startsWith('wdn_operator_')) {
      error.textContent = 'The console needs an operator token: wdn_operator_ followed by 43 characters.';
      return;
    }
    setToken(token);
    const epoch = state.epoch;
    $('login-button').disabled = true;
    try {
      const kill = await api('GET', '/v1/kill');
      if (epoch !== state.epoch) return;
      sessionStorage.setItem(TOKEN_KEY, token);
      $('token').value = '';
      showApp(true);
      renderKill(kill.on);
      start();
    } catch (e) {
      if (epoch !== state.epoch) return;
      sessionStorage.removeItem(TOKEN_KEY);
      setToken('');
      error.textContent = errorText(e);
    } finally {
      $('login-button').disabled = false;
    }
  }

  function logout() {
    sessionStorage.removeItem(TOKEN_KEY);
    setToken('');
    stop();
    showApp(false);
    for (const id of ['approvals', 'sandboxes', 'feed']) $(id).replaceChildren();
    for (const id of ['approvals-error', 'sandboxes-error', 'kill-error', 'feed-status']) $(id).textContent = '';
    $('approvals-empty').hidden = true;
    confirming(false);
    $('token').focus();
  }

  function showApp(on) {
    $('login').hidden = on;
    $('app').hidden = !on;
    $('logout').hidden = !on;
  }

  function start() {
    loadApprovals();
    loadSandboxes();
    startFeed();
    state.timers.push(setInterval(tickExpiry, 1000));
    state.timers.push(setInterval(() => { loadApprovals(); loadKill(); loadSandboxes(); }, POLL_MS));
  }

  function stop() {
    state.timers.forEach(clearInterval);
    state.timers = [];
    Object.values(state.soon).forEach(clearTimeout);
    state.soon = {};
    state.approvalsLoad++;
    if (state.feed) state.feed.abort();
    state.feed = null;
    state.lastSeq = 0;
  }

  // --- Pending approvals ---

  async function loadApprovals() {
    const n = ++state.approvalsLoad;
    try {
      const data = await api('GET', '/v1/approvals?state=pending');
      if (n !== state.approvalsLoad) return;
      renderApprovals((data && data.approvals) || []);
      $('approvals-error').textContent = '';
    } catch (e) {
      if (n === state.approvalsLoad) $('approvals-error').textContent = errorText(e);
    }
  }

  // renderApprovals shows list in its order, keeping the card of an approval
  // already shown (with its open detail or its error).
  function renderApprovals(list) {
    const box = $('approvals');
    const shown = new Map(Array.from(box.children, (c) => [c.dataset.approvalId, c]));
    box.replaceChildren(...list.map((a) => shown.get(a.id) || approvalCard(a)));
    $('approvals-empty').hidden = box.children.length > 0;
    tickExpiry();
  }

  function approvalCard(a) {
    const req = a.request || {};
    const dec = a.decision || {};
    // Tier 4 takes a fresh human answer every time: no session or always.
    const manual = dec.manual_only === true || dec.tier === 4;
    const card = el('article', manual ? 'approval manual' : 'approval');
    card.dataset.approvalId = a.id;

    const title = `${req.capability || '?'} ${req.action || '?'}` + (req.tool ? ` · ${req.tool}` : '');
    const expires = el('span', 'expires');
    expires.dataset.expires = String(Date.parse(a.expires_at));
    const meta = el('p', 'meta');
    meta.append(
      `tier ${dec.tier || '?'}${manual ? ' (manual only)' : ''} · rule ${dec.rule || '?'} · from ${a.channel || '?'}` +
        (req.session ? ` · session ${req.session}` : '') + ' · ',
      expires,
    );

    const error = el('p', 'error');
    error.setAttribute('role', 'alert');
    const detail = el('pre', 'detail');
    detail.hidden = true;

    const buttons = [
      ['once', 'Approve once', 'primary', 'run this exact input once'],
      ['deny', 'Deny', 'danger', 'refuse it'],
    ];
    if (!manual && req.session) {
      buttons.push(['session', 'Session', '', `allow this exact input for the rest of session ${req.session}`]);
    }
    if (!manual) buttons.push(['always', 'Always', '', 'allow this exact input from now on: adds a rule to the policy file']);
    // Only a shell command can run on the host (warden.RunsOnHost).
    if (req.capability === 'shell' && req.action === 'exec') {
      buttons.push(['host', 'Run on host', 'escalate',
        'run this exact command once on the host, outside the sandbox (for git push over SSH, docker, gh): recorded as an escalation']);
    }
    buttons.push(['view', 'View', '', 'show the full request and decision']);

    const actions = el('div', 'actions');
    for (const [answer, label, cls, tip] of buttons) {
      const b = el('button', cls, label);
      b.type = 'button';
      b.title = tip;
      b.dataset.answer = answer;
      b.addEventListener('click', () => {
        if (answer === 'view') toggleDetail(detail, a);
        else answerApproval(card, a.id, answer, error);
      });
      actions.append(b);
    }

    card.append(
      el('h3', null, title),
      el('code', 'resource', req.resource || '(no resource)'),
      el('p', 'reason', dec.reason),
      meta,
      actions,
      error,
      detail,
    );
    return card;
  }

  function toggleDetail(pre, a) {
    if (pre.hidden) pre.textContent = JSON.stringify({ request: a.request, decision: a.decision }, null, 2);
    pre.hidden = !pre.hidden;
  }

  async function answerApproval(card, id, answer, error) {
    const buttons = card.querySelectorAll('button[data-answer]:not([data-answer="view"])');
    buttons.forEach((b) => { b.disabled = true; });
    error.textContent = '';
    const path = `/v1/approvals/${encodeURIComponent(id)}/${answer === 'deny' ? 'deny' : 'approve'}`;
    const body = answer === 'deny' ? { channel: 'console' } : { answer, channel: 'console' };
    try {
      await api('POST', path, body);
      state.approvalsLoad++; // a load already under way may still list it
      card.remove();
      $('approvals-empty').hidden = $('approvals').children.length > 0;
      soon('approvals', loadApprovals);
    } catch (e) {
      error.textContent = errorText(e);
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  function tickExpiry() {
    const now = Date.now();
    for (const s of document.querySelectorAll('#approvals .expires')) {
      const left = Math.round((Number(s.dataset.expires) - now) / 1000);
      if (Number.isNaN(left)) s.textContent = 'no expiry';
      else if (left <= 0) s.textContent = 'expired';
      else s.textContent = 'expires in ' + (left >= 60 ? `${Math.floor(left / 60)}m ${String(left % 60).padStart(2, '0')}s` : `${left}s`);
    }
  }

  // --- Kill switch: a click asks, a second click on Confirm acts ---

  async function loadKill() {
    const epoch = state.epoch;
    try {
      const k = await api('GET', '/v1/kill');
      if (epoch === state.epoch) renderKill(k.on);
    } catch (e) {
      if (epoch === state.epoch) $('kill-error').textContent = errorText(e);
    }
  }

  function renderKill(on) {
    const changed = (on === true) !== state.kill;
    state.kill = on === true;
    const s = $('kill-state');
    s.textContent = state.kill ? 'on' : 'off';
    s.classList.toggle('on', state.kill);
    $('kill-toggle').textContent = state.kill ? 'Turn kill switch off' : 'Turn kill switch on';
    $('kill-error').textContent = '';
    if (changed) confirming(false);
  }

  function confirming(on) {
    $('kill-toggle').hidden = on;
    $('kill-confirm').hidden = !on;
    $('kill-cancel').hidden = !on;
    $('kill-confirm').textContent = state.kill ? 'Confirm: turn the kill switch off' : 'Confirm: turn the kill switch on';
  }

  async function setKill() {
    const epoch = state.epoch;
    const button = $('kill-confirm');
    button.disabled = true;
    $('kill-error').textContent = '';
    try {
      const k = await api('POST', '/v1/kill', { on: !state.kill, by: 'console' });
      if (epoch !== state.epoch) return;
      renderKill(k.on);
      confirming(false);
    } catch (e) {
      if (epoch === state.epoch) $('kill-error').textContent = errorText(e);
    } finally {
      button.disabled = false;
    }
  }

  // --- Sandboxes ---

  async function loadSandboxes() {
    const epoch = state.epoch;
    try {
      const data = await api('GET', '/v1/sandboxes');
      if (epoch !== state.epoch) return;
      const list = data && Array.isArray(data.sandboxes) ? data.sandboxes : [];
      const box = $('sandboxes');
      $('sandboxes-error').textContent = '';
      if (list.length === 0) {
        box.replaceChildren(el('p', 'empty', 'none'));
        return;
      }
      const head = el('tr');
      head.append(el('th', null, 'Name'), el('th', null, 'State'));
      const body = el('tbody');
      for (const s of list) {
        const tr = el('tr');
        tr.append(el('td', null, s && s.name), el('td', null, s && s.state));
        body.append(tr);
      }
      const thead = el('thead');
      thead.append(head);
      const table = el('table');
      table.append(thead, body);
      box.replaceChildren(table);
    } catch (e) {
      if (epoch === state.epoch) $('sandboxes-error').textContent = errorText(e);
    }
  }

  // --- Live audit feed: server-sent events over a signed fetch ---

  // startFeed (re)starts the stream with the current filter, from the start
  // of the feed's backlog.
  function startFeed() {
    if (state.feed) state.feed.abort();
    state.feed = new AbortController();
    state.lastSeq = 0;
    $('feed').replaceChildren();
    followFeed(state.feed.signal);
  }

  // followFeed reads the stream until signal aborts, reconnecting after a
  // drop from the last item seen: after 1s, and twice as long after every
  // failure in a row, up to 30s.
  async function followFeed(signal) {
    let wait = RECONNECT_MS;
    while (!signal.aborted) {
      // As many items as the page keeps: the backlog at first, the gap after a drop.
      const q = new URLSearchParams({ stream: '1', limit: String(MAX_FEED_ROWS) });
      if (state.lastSeq) q.set('afterSeq', String(state.lastSeq));
      if (state.filter.type) q.set('type', state.filter.type);
      if (state.filter.severity) q.set('severity', state.filter.severity);
      try {
        const res = await request('GET', '/api/audit/feed?' + q, undefined, signal);
        $('feed-status').textContent = 'live';
        wait = RECONNECT_MS;
        await readEvents(res.body);
        if (!signal.aborted) $('feed-status').textContent = 'disconnected, reconnecting…';
      } catch (e) {
        if (signal.aborted) return;
        $('feed-status').textContent = `${errorText(e)}; retrying…`;
      }
      await sleep(wait, signal);
      wait = Math.min(2 * wait, MAX_RECONNECT_MS);
    }
  }

  // readEvents parses server-sent events until the stream ends. Events are
  // separated by a blank line; a line starting with ':' is a comment (the
  // daemon's heartbeat). The daemon ends lines with "\n" only.
  async function readEvents(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        onEvent(buf.slice(0, end));
        buf = buf.slice(end + 2);
      }
    }
  }

  function onEvent(text) {
    let event = 'message';
    const data = [];
    for (const line of text.split('\n')) {
      if (line === '' || line[0] === ':') continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (event !== 'item' || data.length === 0) return;
    try {
      addItem(JSON.parse(data.join('\n')));
    } catch (_) { /* not an item: skip it */ }
  }

  function addItem(it) {
    if (!it || typeof it.seq !== 'number' || it.seq <= state.lastSeq) return;
    state.lastSeq = it.seq;
    const tr = el('tr');
    tr.dataset.seq = String(it.seq);
    tr.dataset.type = String(it.type);
    tr.dataset.severity = String(it.severity);
    if (it.trace_id) tr.title = `trace ${it.trace_id}`;
    tr.append(
      el('td', 'time', new Date(it.time_ms).toLocaleTimeString()),
      el('td', 'sev', it.severity),
      el('td', 'type', it.kind === 'decision' ? `decision: ${it.type}` : it.type),
      el('td', 'summary', it.summary),
    );
    const feed = $('feed');
    feed.prepend(tr);
    while (feed.children.length > MAX_FEED_ROWS) feed.lastElementChild.remove();

    if (APPROVAL_EVENTS.has(it.type) || (it.kind === 'decision' && it.type === 'ask')) soon('approvals', loadApprovals);
    if (it.type === 'kill_switch_on' || it.type === 'kill_switch_off') soon('kill', loadKill);
    if (it.type === 'sandbox_lifecycle') soon('sandboxes', loadSandboxes);
  }

  // --- Wiring ---

  $('login-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    login($('token').value.trim());
  });
  $('logout').addEventListener('click', logout);
  $('kill-toggle').addEventListener('click', () => confirming(true));
  $('kill-cancel').addEventListener('click', () => confirming(false));
  $('kill-confirm').addEventListener('click', setKill);
  $('feed-filter').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.filter = { type: $('feed-type').value.trim(), severity: $('feed-severity').value };
    startFeed();
  });

  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) login(saved);
})();
