// witan classroom page. Plain JavaScript, no build step, no library.
// It reads the node's /oth/v0 API, listens to /oth/v0/events, and writes
// only through /classroom/v0 (vote, checkpoint) with the page's CSRF token.
// Every figure carries its finality in words; nothing here says "final".
'use strict';
(function () {
  const meta = (n) => {
    const m = document.querySelector('meta[name="' + n + '"]');
    return m ? m.content : '';
  };
  const CSRF = meta('witan-csrf');
  const VOTER = meta('witan-voter');
  const CODE = meta('witan-code');
  const READONLY = meta('witan-readonly') === 'true' || CSRF === '';
  const API = '/oth/v0';
  const RULE_WORDS = {
    approve_of_electorate: 'approvals out of the whole electorate',
    approve_of_cast: 'approvals out of approvals and rejections cast',
    approvals_of_required: 'approvals out of the approvals required',
  };
  const CMP_WORDS = { gt: 'more than', gte: 'at least', ge: 'at least', eq: 'exactly' };
  const FLAG_WORDS = {
    contradictory_determination: 'Contradictory determination: two determinations of this merge request disagree. This laptop shows both and takes neither as the outcome.',
    concurrent_open: 'Concurrent open: the same merge request was opened by several transactions.',
    concurrent_append: 'Concurrent append: this branch has several heads at once.',
    group_conflict: 'Group conflict: two groups of the same name were created at once; neither applies.',
    group_update_conflict: 'Group update conflict: concurrent updates of this group; only their common part applies.',
    branch_name_conflict: 'Branch name conflict: two branches of the same name were created at once; neither applies.',
    repeated_session_create: 'The session was created by several signed transactions.',
  };

  const st = {
    sessions: [],
    labels: {},
    session: '',
    teacher: false,
    source: null,
    sourceFor: '',
    timer: 0,
    busy: false,
    again: false,
    receipts: {},
    reason: '',
    names: {}, // member key -> the name the teacher typed (this laptop only)
    peerNames: {}, // libp2p peer id -> name
    draft: null, // {nid, heading, text, summary, plan, error}
    closing: {}, // mr id -> {plan} or {error}
    notes: {}, // id -> a message shown under a form
    homeTimer: 0,
    peersTimer: 0,
    openers: {}, // mr id -> the key that opened it
    joining: '',
  };

  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === 'text') e.textContent = v;
        else if (k === 'class') e.className = v;
        else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const k of kids.flat(Infinity)) {
      if (k !== null && k !== undefined && k !== false) e.append(k);
    }
    return e;
  }

  async function getJSON(path) {
    const r = await fetch(API + path, { headers: { Accept: 'application/json' } });
    const b = await r.json().catch(() => ({}));
    if (!r.ok) {
      const err = new Error(b.detail || 'HTTP ' + r.status);
      err.status = r.status;
      err.code = b.code;
      throw err;
    }
    return b;
  }

  async function post(path, body) {
    const r = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Witan-CSRF': CSRF, Accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const b = await r.json().catch(() => ({}));
    return { ok: r.ok, status: r.status, body: b };
  }

  const short = (id) => (id && id.length > 24 ? id.slice(0, 15) + '…' + id.slice(-4) : id || '');
  const pct = (r) => (r && r.den ? (r.num * 100) / r.den : 0);
  const q = (s) => 'session=' + encodeURIComponent(s);

  function setLive(text) {
    document.getElementById('live').textContent = text;
  }

  function finality(f) {
    const fa = f === 'final_advisory';
    return el('span', { class: 'finality', 'data-finality': f },
      'Finality: ', el('strong', { text: fa ? 'final advisory' : 'provisional' }),
      fa ? ' (checkpointed on this laptop)' : ' (not yet checkpointed; may change)');
  }

  function simBadge(sim) {
    return sim
      ? el('span', { class: 'badge simulation', 'data-simulation': 'true', text: 'Simulation' })
      : el('span', { class: 'badge', 'data-simulation': 'false', text: 'Not marked as a simulation' });
  }

  function keyLabel(k) {
    const you = k === VOTER ? ' (you)' : '';
    if (st.names[k]) {
      return el('span', { class: 'member', title: k }, el('strong', { text: st.names[k] }), ' ', el('span', { class: 'id', text: '(' + short(k) + ')' }), you);
    }
    return el('span', { class: 'id', title: k }, short(k), you);
  }

  async function loadNames() {
    try {
      const r = await fetch('/classroom/v0/names', { headers: { Accept: 'application/json' } });
      const b = await r.json();
      const names = {};
      const peers = {};
      for (const n of b.names || []) {
        names[n.key] = n.name;
        if (n.peer) peers[n.peer] = n.name;
      }
      st.names = names;
      st.peerNames = peers;
    } catch (e) {
      // No address book: keys are shown.
    }
  }

  function note(id) {
    const n = st.notes[id];
    if (!n) return null;
    return el('p', { class: n.ok ? 'note ok' : 'note error', role: n.ok ? 'status' : 'alert', id: id + '-note', text: n.text });
  }

  function problem(res) {
    const b = res.body || {};
    if (b.receipts) {
      const bad = b.receipts.find((r) => r.status !== 'accepted');
      if (bad) return 'refused: ' + (bad.errors || []).map((e) => e.code + ': ' + e.detail).join('; ');
    }
    return b.detail || 'HTTP ' + res.status;
  }

  function codeBlock() {
    if (!CODE) return null;
    return el('div', { class: 'code' },
      el('label', { for: 'my-code', text: 'Your enrolment code (give it to your teacher to paste):' }),
      el('input', { id: 'my-code', class: 'id', readonly: true, value: CODE, size: '60', 'data-keep': 'no' }),
      el('button', { type: 'button', id: 'copy-code', onclick: () => {
        const f = document.getElementById('my-code');
        f.select();
        (navigator.clipboard ? navigator.clipboard.writeText(CODE) : Promise.reject(new Error('no clipboard')))
          .then(() => setLive('Your code is copied.'), () => setLive('Select the code and copy it.'));
      } }, 'Copy the code'));
  }

  // ---- routing -------------------------------------------------------

  function parseHash() {
    const m = location.hash.match(/^#\/s\/(sha256:[0-9a-f]{64})(\/teacher)?$/);
    return m ? { session: m[1], teacher: !!m[2] } : { session: '', teacher: false };
  }

  async function route() {
    const r = parseHash();
    try {
      st.sessions = (await getJSON('/sessions')).sessions || [];
    } catch (e) {
      showError('Could not list the sessions: ' + e.message);
      return;
    }
    if (!r.session && st.sessions.length === 1 && location.hash === '') {
      location.replace('#/s/' + st.sessions[0]);
      return;
    }
    st.session = r.session;
    st.teacher = r.teacher;
    await renderNav();
    document.getElementById('mode').textContent = READONLY
      ? 'Read-only page: served beyond this laptop, it cannot vote or checkpoint.'
      : VOTER ? 'Voting as ' + short(VOTER) + ' (key on this laptop).' : 'No voter key on this laptop.';
    clearInterval(st.homeTimer);
    clearInterval(st.peersTimer);
    await loadNames();
    if (!st.session) {
      renderHome();
      listen('');
      clearInterval(st.homeTimer); // another route may have set it meanwhile
      st.homeTimer = setInterval(pollHome, 1000);
      pollHome();
      return;
    }
    listen(st.session);
    clearInterval(st.peersTimer); // another route may have set it meanwhile
    if (st.teacher) st.peersTimer = setInterval(pollPeers, PEERS_EVERY);
    await refresh();
    document.getElementById('main').focus({ preventScroll: true });
  }

  async function renderNav() {
    const ul = document.getElementById('sessions');
    const items = [];
    for (const s of st.sessions.slice(0, 50)) {
      if (!(s in st.labels)) {
        try {
          const a = await getJSON('/sessions/' + s);
          st.labels[s] = { label: a.state.label || short(s), sim: !!a.state.simulation };
        } catch (e) {
          st.labels[s] = { label: short(s), sim: false };
        }
      }
      const l = st.labels[s];
      const here = s === st.session;
      items.push(el('li', null,
        el('a', { href: '#/s/' + s, 'aria-current': here && !st.teacher ? 'page' : null }, l.label + (l.sim ? ' (simulation)' : '')),
        ' · ',
        el('a', { href: '#/s/' + s + '/teacher', 'aria-current': here && st.teacher ? 'page' : null }, "teacher's view")));
    }
    ul.replaceChildren(...items);
  }

  function renderHome() {
    const view = document.getElementById('view');
    const canWrite = !READONLY && VOTER;
    view.replaceChildren(
      el('h2', { text: 'Sessions on this node' }),
      st.sessions.length === 0
        ? el('p', { text: 'This node holds no session yet. Start a class below, or join one a classmate\'s laptop announces.' })
        : el('ul', null, st.sessions.map((s) => el('li', null,
          el('a', { href: '#/s/' + s }, st.labels[s].label), ' ',
          st.labels[s].sim ? el('span', { class: 'badge simulation', text: 'Simulation' }) : null, ' ',
          el('span', { class: 'id', text: short(s) })))),
      canWrite ? el('section', { 'aria-labelledby': 'h-code' }, el('h2', { id: 'h-code', text: 'Your key' }), codeBlock()) : null,
      el('section', { 'aria-labelledby': 'h-available' },
        el('h2', { id: 'h-available', text: 'Sessions the laptops around you announce' }),
        el('div', { id: 'available' }, el('p', { text: 'Looking…' })), note('join')),
      canWrite ? el('section', { 'aria-labelledby': 'h-start' },
        el('h2', { id: 'h-start', text: 'Start a class (teacher)' }),
        el('p', { text: 'Starts a simulated session from the template: three short class rules, changed by a majority of the class (two thirds to change how they are changed). You are its first member; enrol your students from the teacher\'s view.' }),
        el('label', { for: 'start-label', text: 'Name of the class' }), ' ',
        el('input', { id: 'start-label', type: 'text', value: 'Class rules', maxlength: '80' }), ' ',
        el('button', { type: 'button', id: 'start', onclick: startClass }, 'Start the class'),
        note('start')) : null);
    document.title = 'witan classroom (simulation)';
  }

  async function pollHome() {
    if (st.session) return;
    let sessions = st.sessions;
    try {
      sessions = (await getJSON('/sessions')).sessions || [];
    } catch (e) { /* keep the last list */ }
    if (st.joining && sessions.includes(st.joining)) {
      const id = st.joining;
      st.joining = '';
      location.hash = '#/s/' + id;
      return;
    }
    let avail = [];
    try {
      avail = (await getJSON('/peers')).available || [];
    } catch (e) { /* a node without sync announces nothing */ }
    const box = document.getElementById('available');
    if (!box) return;
    avail = avail.filter((o) => o.space.startsWith('sha256:') && !sessions.includes(o.space));
    const want = JSON.stringify(avail.map((o) => o.space));
    if (box.getAttribute('data-list') === want) return;
    box.setAttribute('data-list', want);
    box.replaceChildren(avail.length === 0
      ? el('p', { text: 'None yet: no connected laptop announces a session this one does not hold.' })
      : el('ul', null, avail.map((o) => el('li', { 'data-available': o.space },
        el('span', { class: 'id', text: o.space }), ' ',
        READONLY ? null : el('button', { type: 'button', class: 'join', id: 'join-' + o.space.slice(7, 19), onclick: () => joinSession(o.space) }, 'Join this session')))));
  }

  async function joinSession(id) {
    const res = await post('/classroom/v0/join', { session: id }).catch((e) => ({ ok: false, body: { detail: e.message } }));
    st.notes.join = res.ok
      ? { ok: true, text: 'Joined: this laptop is fetching the session from its peers; it opens when it arrives.' }
      : { ok: false, text: 'Could not join: ' + problem(res) };
    if (res.ok) st.joining = id;
    const box = document.getElementById('available');
    if (box && box.parentNode) {
      const old = document.getElementById('join-note');
      if (old) old.remove();
      box.parentNode.append(note('join'));
    }
  }

  async function startClass() {
    const b = document.getElementById('start');
    b.disabled = true;
    const label = document.getElementById('start-label').value;
    const res = await post('/classroom/v0/start', { label }).catch((e) => ({ ok: false, body: { detail: e.message } }));
    if (res.ok) {
      location.hash = '#/s/' + res.body.made + '/teacher';
      return;
    }
    b.disabled = false;
    st.notes.start = { ok: false, text: 'The class was not started: ' + problem(res) };
    const old = document.getElementById('start-note');
    if (old) old.remove();
    b.after(note('start'));
  }

  function showError(text) {
    document.getElementById('view').replaceChildren(el('p', { class: 'error', role: 'alert', text }));
  }

  // ---- live events ---------------------------------------------------

  function listen(session) {
    if (st.sourceFor === session && st.source) return;
    if (st.source) st.source.close();
    st.source = null;
    st.sourceFor = session;
    if (!session) return;
    const es = new EventSource(API + '/events?' + q(session));
    es.addEventListener('entry', (ev) => {
      const d = JSON.parse(ev.data);
      schedule('New ' + d.type + ' (log index ' + (d.position - 1) + ', ' + d.finality.replace('_', ' ') + ').');
    });
    es.addEventListener('checkpoint', (ev) => {
      const d = JSON.parse(ev.data);
      schedule('This laptop signed a checkpoint of ' + d.size + ' entries: the figures it covers are final advisory.');
    });
    es.onopen = () => document.body.setAttribute('data-live', 'open');
    es.onerror = () => {
      document.body.setAttribute('data-live', 'retrying');
      setLive('Lost the connection to the node; retrying…');
    };
    st.source = es;
  }

  function schedule(reason) {
    st.reason = reason;
    clearTimeout(st.timer);
    st.timer = setTimeout(refresh, 80);
  }

  async function refresh() {
    if (!st.session) return;
    if (st.busy) {
      st.again = true;
      return;
    }
    st.busy = true;
    try {
      await renderSession(st.session);
      if (st.reason) setLive('Updated: ' + st.reason);
      st.reason = '';
    } catch (e) {
      showError('Could not read session ' + short(st.session) + ': ' + e.message);
    } finally {
      st.busy = false;
      if (st.again) {
        st.again = false;
        schedule(st.reason);
      }
    }
  }

  // ---- the session ---------------------------------------------------

  async function renderSession(id) {
    const qs = '?' + q(id);
    const [sess, mrs, law, cp] = await Promise.all([
      getJSON('/sessions/' + id + '/state'),
      getJSON('/merge-requests' + qs),
      getJSON('/law' + qs).catch((e) => ({ error: e })),
      getJSON('/checkpoint' + qs).catch(() => null),
    ]);
    const s = sess.state;
    const open = mrs.merge_requests.filter((m) => m.status === 'open');
    const closed = mrs.merge_requests.filter((m) => m.status !== 'open');
    const details = await Promise.all(mrs.merge_requests.map(async (m) => ({
      m,
      tally: await getJSON('/merge-requests/' + m.id + '/tally' + qs),
      diff: m.status === 'open' ? await getJSON('/merge-requests/' + m.id + '/diff' + qs).catch((e) => ({ error: e })) : null,
    })));
    const byID = Object.fromEntries(details.map((d) => [d.m.id, d]));
    await Promise.all(mrs.merge_requests.map(async (m) => {
      if (st.openers[m.id] || !(m.opened_by || []).length) return;
      try {
        st.openers[m.id] = (await getJSON('/objects/' + m.opened_by[0])).object.author;
      } catch (e) { /* shown without its proposer */ }
    }));
    let peers = null;
    if (st.teacher) peers = await fetch('/classroom/v0/peers?' + q(id)).then((r) => r.json()).catch(() => null);

    const focused = document.activeElement && document.activeElement.id;
    const saved = {};
    for (const f of document.getElementById('view').querySelectorAll('input[id], textarea[id]')) {
      if (f.getAttribute('data-keep') !== 'no') saved[f.id] = f.value;
    }
    for (const id of st.clear || []) delete saved[id];
    st.clear = [];
    const roster = s.groups.find((g) => g.id === 'roster');
    const member = !!(roster && VOTER && roster.members.includes(VOTER));
    const parts = [
      el('h2', null, (st.teacher ? "Teacher's view: " : '') + (s.label || 'Session'), ' ', simBadge(s.simulation)),
      el('p', null, 'Session ', el('span', { class: 'id', text: id }), '. ', finality(sess.finality),
        '. ', s.entries + ' entries, ' + s.ballots + ' ballots.'),
      s.simulation ? el('p', { class: 'notice', text: 'Simulated session: every vote, merge and law text here is invented for the class.' }) : null,
      s.flags.length ? el('div', null, s.flags.map(flagLine)) : null,
      VOTER && !READONLY && !member
        ? el('div', { class: 'notice', id: 'not-enrolled' }, el('p', { text: 'Your key is not in this class\'s roster yet, so you cannot vote or propose here. Give your teacher your code:' }), codeBlock())
        : null,
    ];
    if (st.teacher) parts.push(teacherPanel(id, s, cp, peers));
    parts.push(el('section', { 'aria-labelledby': 'h-mrs' },
      el('h2', { id: 'h-mrs', text: 'Open merge requests (' + open.length + ')' }),
      open.length === 0 ? el('p', { text: 'No merge request is open.' }) : null,
      open.map((m) => mrBlock(id, byID[m.id], s))));
    if (closed.length) {
      parts.push(el('section', { 'aria-labelledby': 'h-closed' },
        el('h2', { id: 'h-closed', text: 'Decided and closed merge requests' }),
        closed.map((m) => mrBlock(id, byID[m.id], s))));
    }
    parts.push(lawSection(law, id, member));
    parts.push(rosterSection(s));
    parts.push(branchSection(s));
    document.getElementById('view').replaceChildren(...parts.filter((p) => p !== null && p !== undefined));
    for (const [fid, v] of Object.entries(saved)) {
      const f = document.getElementById(fid);
      if (f && !f.readOnly) f.value = v;
    }
    document.title = (st.teacher ? "Teacher's view: " : '') + (s.label || 'Session') + (s.simulation ? ' (simulation)' : '') + ' · witan classroom';
    if (focused) {
      const f = document.getElementById(focused);
      if (f) f.focus({ preventScroll: true });
    }
  }

  function flagLine(f) {
    return el('p', { class: 'flag', 'data-flag': f, text: FLAG_WORDS[f] || f.replace(/_/g, ' ') });
  }

  function shareBlock(key, label, ratio, explain, threshold) {
    const p = pct(ratio);
    const text = ratio && ratio.den
      ? label + ': ' + ratio.num + ' of ' + ratio.den + ' (' + p.toFixed(1) + '%)'
      : label + ': none yet (0 of 0)';
    const tid = 'share-' + key + '-' + Math.random().toString(36).slice(2, 8);
    const fill = el('div', { class: 'fill' });
    fill.style.width = Math.min(100, p) + '%';
    const track = el('div', {
      class: 'track', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': '100',
      'aria-valuenow': Math.min(100, p).toFixed(1), 'aria-valuetext': text, 'aria-labelledby': tid,
    }, fill);
    if (threshold && threshold.den) {
      const mk = el('div', { class: 'mark', 'aria-hidden': 'true' });
      mk.style.left = Math.min(100, pct(threshold)) + '%';
      track.append(mk);
    }
    return el('div', { class: 'share', 'data-share': key },
      el('p', { class: 'share-text', id: tid, text }), track,
      explain ? el('p', { class: 'share-explain', text: explain }) : null);
  }

  function tallyBlock(d) {
    const r = d.tally.result;
    const t = r.tally;
    const rs = t.rule_share;
    let ruleExplain = 'This rule (' + (r.kind || 'always_allow') + ') tests no share: it always allows.';
    let ruleBlock;
    if (rs) {
      const th = rs.threshold;
      ruleExplain = 'The rule passes when ' + (RULE_WORDS[rs.name] || rs.name) + ' is ' + (CMP_WORDS[rs.cmp] || rs.cmp) + ' ' +
        th.num + '/' + th.den + ' (' + pct(th).toFixed(1) + '%). The dashed line marks it.';
      ruleBlock = shareBlock('rule_share', 'Rule share (' + rs.name + ')', rs.share, ruleExplain, th);
    } else {
      ruleBlock = el('div', { class: 'share', 'data-share': 'rule_share' }, el('p', { class: 'share-text', text: 'Rule share: none' }), el('p', { class: 'share-explain', text: ruleExplain }));
    }
    return el('div', { class: 'tally', 'data-mr': d.m.id },
      el('p', { class: 'counts' },
        el('strong', { text: t.approve + ' approve' }), ', ', el('strong', { text: t.reject + ' reject' }), ', ',
        el('strong', { text: t.abstain + ' abstain' }), ' of an electorate of ' + t.electorate +
        (t.void ? ' (' + t.void + ' voided for two unlinked ballots)' : '') + '. Outcome now: ',
        el('strong', { class: 'outcome', text: r.outcome }),
        r.if_closed && r.if_closed !== r.outcome ? ' (if the poll closed now: ' + r.if_closed + '; notice and deadlines are advisory on this laptop)' : '',
        '. ', finality(d.tally.finality)),
      el('div', { class: 'shares' },
        shareBlock('approve_of_cast', 'Approve of cast', t.approve_of_cast, 'Approvals out of approvals and rejections (abstentions left out).'),
        shareBlock('approve_of_electorate', 'Approve of electorate', t.approve_of_electorate, 'Approvals out of everyone who may vote.'),
        ruleBlock));
  }

  function mrBlock(session, d, s) {
    const m = d.m;
    const hid = 'mr-' + m.id.slice(7, 19);
    const parts = [
      el('h3', { id: hid, text: m.summary || 'Merge request ' + short(m.id) }),
      st.openers[m.id] ? el('p', { class: 'opener' }, 'Proposed by ', keyLabel(st.openers[m.id]),
        m.summary ? '. The title is the proposer\'s own summary, not an official one; the diff is the neutral view.' : '.') : null,
      el('p', null, 'Status: ', el('strong', { class: 'status', text: m.status }), m.reason ? ' (' + m.reason + ')' : '',
        '. Into ', el('strong', { text: m.target.branch }), m.source ? ' from ' + m.source.branch : '',
        '. Electorate: ' + m.electorate + '. Rule: ' + (m.rule && m.rule.kind ? m.rule.kind : 'unknown') + '. ',
        finality(m.finality)),
      el('p', null, 'Id ', el('span', { class: 'id', text: m.id })),
      (m.flags || []).map(flagLine),
      m.structure_failed ? el('p', { class: 'flag', text: 'The structure check failed: this merge request cannot merge as it stands.' }) : null,
      (m.determinations || []).length ? el('p', null, 'Determinations: ' + m.determinations.map((x) => x.outcome).join(', ') + '.') : null,
      tallyBlock(d),
    ];
    if (m.status === 'open') parts.push(voteBlock(session, m, s));
    if (m.status === 'open' && st.teacher && !READONLY && VOTER) parts.push(closeBlock(session, m));
    if (st.receipts[m.id]) parts.push(receiptBlock(st.receipts[m.id]));
    if (d.diff) {
      parts.push(el('details', { open: true },
        el('summary', { text: 'What it changes (diff)' }),
        d.diff.error
          ? el('p', { text: 'No diff: ' + d.diff.error.message })
          : el('pre', { class: 'diff', tabindex: '0', 'aria-label': 'Diff of ' + (m.summary || short(m.id)), text: d.diff.diff.unified || '(no text changes)' })));
    }
    return el('article', { class: 'mr', 'data-mr': m.id, 'aria-labelledby': hid }, parts);
  }

  function voteBlock(session, m, s) {
    if (READONLY) return el('p', { class: 'vote-off', text: 'Read-only page: voting is only possible on the laptop that holds your key, at http://127.0.0.1.' });
    if (!VOTER) return el('p', { class: 'vote-off', text: 'No voter key on this laptop: run witan keygen, then witan up -key FILE, to vote from this page.' });
    const tag = m.id.slice(7, 19);
    const buttons = ['approve', 'reject', 'abstain'].map((c) => el('button', {
      type: 'button', class: c, id: 'vote-' + c + '-' + tag, 'data-choice': c,
      onclick: () => vote(session, m, c),
    }, c[0].toUpperCase() + c.slice(1)));
    return el('fieldset', { class: 'vote' },
      el('legend', null, 'Your vote, signed on this laptop as ', keyLabel(VOTER)),
      el('div', { class: 'buttons' }, buttons),
      el('p', { class: 'hint', text: 'Voting again replaces your earlier ballot on this merge request.' }));
  }

  async function vote(session, m, choice) {
    const tag = m.id.slice(7, 19);
    for (const b of document.querySelectorAll('button[id$="-' + tag + '"]')) b.disabled = true;
    setLive('Signing and sending your ' + choice + ' ballot…');
    let res;
    try {
      res = await post('/classroom/v0/vote', { session, mr: m.id, choice });
    } catch (e) {
      res = { ok: false, status: 0, body: { detail: e.message } };
    }
    st.receipts[m.id] = { choice, res };
    st.reason = res.ok ? 'your ' + choice + ' ballot was accepted; the receipt is below.' : 'your ballot was not taken: ' + (res.body.detail || res.status);
    await refresh();
    const f = document.getElementById('vote-' + choice + '-' + tag);
    if (f) f.focus();
  }

  // ---- closing a vote (teacher) --------------------------------------

  function closeBlock(session, m) {
    const tag = m.id.slice(7, 19);
    const c = st.closing[m.id];
    const parts = [el('h4', { text: 'Close the vote' })];
    if (!c || c.error) {
      parts.push(el('p', { class: 'hint', text: 'This laptop works out the determination the rule allows over every ballot it holds, and shows it before anything is signed.' }));
      parts.push(el('button', { type: 'button', id: 'close-' + tag, onclick: () => planClose(session, m) }, 'Work out the determination'));
      if (c && c.error) parts.push(el('p', { class: 'error', role: 'alert', id: 'close-error-' + tag, text: c.error }));
      return el('div', { class: 'close', 'data-close': m.id }, parts);
    }
    const p = c.plan;
    const t = p.result.tally;
    parts.push(el('p', { class: 'close-plan', id: 'close-plan-' + tag }, 'Closing now: ', el('strong', { class: 'close-outcome', text: p.outcome }),
      '. Tally: ' + t.approve + ' approve, ' + t.reject + ' reject, ' + t.abstain + ' abstain of an electorate of ' + t.electorate +
      (t.void ? ' (' + t.void + ' voided)' : '') + ', over the ' + p.ballots.length + (p.ballots.length === 1 ? ' ballot' : ' ballots') +
      ' cast on it. Every laptop re-counts exactly these ballots and refuses the determination if it disagrees.'));
    parts.push(el('div', { class: 'buttons' },
      el('button', { type: 'button', id: 'close-sign-' + tag, onclick: () => signClose(session, m, p) }, 'Sign the determination: ' + p.outcome),
      el('button', { type: 'button', id: 'close-cancel-' + tag, onclick: () => { delete st.closing[m.id]; refresh(); } }, 'Cancel')));
    return el('div', { class: 'close', 'data-close': m.id }, parts);
  }

  async function planClose(session, m) {
    const res = await post('/classroom/v0/close', { session, mr: m.id, sign: false }).catch((e) => ({ ok: false, body: { detail: e.message } }));
    st.closing[m.id] = res.ok ? { plan: res.body } : { error: 'No determination: ' + problem(res) };
    await refresh();
    const f = document.getElementById((res.ok ? 'close-sign-' : 'close-') + m.id.slice(7, 19));
    if (f) f.focus();
  }

  async function signClose(session, m, p) {
    const res = await post('/classroom/v0/close', { session, mr: m.id, sign: true, outcome: p.outcome, ballots: p.ballots.length })
      .catch((e) => ({ ok: false, body: { detail: e.message } }));
    delete st.closing[m.id];
    if (!res.ok) st.closing[m.id] = { error: 'The determination was not taken: ' + problem(res) };
    st.reason = res.ok ? 'the determination (' + p.outcome + ') was signed and accepted.' : 'the determination was not taken.';
    await refresh();
  }

  function receiptBlock(r) {
    const b = r.res.body;
    const rc = b.receipt;
    if (!rc) {
      return el('div', { class: 'receipt', role: 'alert' }, el('p', { class: 'error', text: 'Your ' + r.choice + ' ballot was not taken: ' + (b.detail || 'HTTP ' + r.res.status) }));
    }
    return el('div', { class: 'receipt', 'data-status': rc.status },
      el('h4', { text: 'Your signed receipt' }),
      el('p', null, 'Ballot ', el('strong', { text: r.choice }), ': ', el('strong', { class: 'receipt-status', text: rc.status }),
        rc.log_index !== null && rc.log_index !== undefined ? ', log index ' + rc.log_index : '', '.'),
      (rc.errors || []).map((e) => el('p', { class: 'error', text: e.code + ': ' + e.detail })),
      el('p', null, 'Ballot transaction ', el('span', { class: 'id receipt-tx', text: rc.tx })),
      b.supersedes ? el('p', null, 'It replaces your ballot ', el('span', { class: 'id', text: b.supersedes })) : null,
      el('p', null, 'Signed by this node ', el('span', { class: 'id', text: rc.node }), ' with signature ', el('span', { class: 'id', text: rc.sig })),
      el('details', null, el('summary', { text: 'Receipt as JSON' }), el('pre', { class: 'receipt-json', tabindex: '0', text: JSON.stringify(rc, null, 2) })));
  }

  // ---- teacher -------------------------------------------------------

  // PEERS_EVERY is how often, in ms, the teacher's view reads the
  // connected laptops again. A laptop that catches up, connects or leaves
  // adds no entry to this laptop's log, so no event tells the page.
  const PEERS_EVERY = 2000;

  function teacherPanel(id, s, cp, peers) {
    const size = cp && cp.checkpoint ? cp.checkpoint.size : 0;
    const logSize = peers ? peers.log_size : s.entries;
    return el('section', { 'aria-labelledby': 'h-teacher' },
      el('h2', { id: 'h-teacher', text: 'Laptops and checkpoints' }),
      READONLY || !VOTER ? null : enrolForm(id),
      el('div', { id: 'peers', 'data-peers': peersKey(peers) }, peersBlock(peers)),
      el('h3', { text: 'Checkpoint' }),
      el('p', { class: 'checkpoint-size' }, 'This laptop\'s log holds ' + logSize + ' entries; ',
        size ? 'its latest checkpoint covers ' + size + '.' : 'it has signed no checkpoint yet, so every figure is provisional.'),
      READONLY
        ? el('p', { text: 'Read-only page: checkpoints are signed from the laptop itself.' })
        : el('button', { type: 'button', id: 'checkpoint', onclick: () => checkpoint(id) }, 'Sign a checkpoint now'),
      el('p', { class: 'hint', text: 'A checkpoint turns the figures it covers from provisional to final advisory on this laptop. It is never final: another laptop may disagree.' }));
  }

  function enrolForm(id) {
    return el('div', { class: 'enrol' },
      el('h3', { text: 'Enrol a student' }),
      el('p', { class: 'hint', text: 'Each student\'s page shows a code. Paste it here with the student\'s name: the code\'s key joins the roster (signed with your key); the name stays on this laptop and is never sent to anyone.' }),
      el('div', { class: 'field' }, el('label', { for: 'enrol-code', text: 'Student\'s code' }), el('input', { id: 'enrol-code', type: 'text', class: 'id', autocomplete: 'off', spellcheck: 'false' })),
      el('div', { class: 'field' }, el('label', { for: 'enrol-name', text: 'Name (kept on this laptop only)' }), el('input', { id: 'enrol-name', type: 'text', maxlength: '80', autocomplete: 'off' })),
      el('button', { type: 'button', id: 'enrol', onclick: () => enrol(id) }, 'Enrol'),
      note('enrol'));
  }

  async function enrol(id) {
    const code = document.getElementById('enrol-code').value;
    const name = document.getElementById('enrol-name').value;
    const res = await post('/classroom/v0/enrol', { session: id, code, name }).catch((e) => ({ ok: false, body: { detail: e.message } }));
    if (res.ok) {
      st.clear = ['enrol-code', 'enrol-name'];
      await loadNames();
    }
    st.notes.enrol = res.ok
      ? { ok: true, text: (name || 'The student') + (res.body.receipts.length ? ' is enrolled.' : ' was enrolled already; the name is saved.') }
      : { ok: false, text: 'Not enrolled: ' + problem(res) };
    st.reason = res.ok ? (name || 'a student') + ' enrolled.' : '';
    await refresh();
    const f = document.getElementById('enrol-code');
    if (f) f.focus();
  }

  // peersBlock is the connected laptops: a heading and a table (or a
  // line saying there is none), from the peers endpoint's answer.
  function peersBlock(peers) {
    const rows = peers && peers.peers ? peers.peers.map((p) => el('tr', { 'data-peer': p.id },
      el('td', null, st.peerNames[p.id] ? el('strong', { text: st.peerNames[p.id] }) : null, st.peerNames[p.id] ? ' ' : null, el('span', { class: 'id', title: p.id, text: short(p.id) })),
      el('td', { class: 'peer-status', text: peerWords(p) }))) : [];
    return [
      el('h3', { text: 'Connected laptops (' + rows.length + ')' }),
      rows.length
        ? el('div', { class: 'table-wrap' }, el('table', null,
          el('caption', { text: 'Peers this laptop is connected to, and how far behind its log each is' }),
          el('thead', null, el('tr', null, el('th', { scope: 'col', text: 'Peer' }), el('th', { scope: 'col', text: 'Behind this laptop' }))),
          el('tbody', null, rows)))
        : el('p', { text: 'No laptop is connected.' }),
    ];
  }

  // peersKey is what peersBlock shows of peers, to tell whether it changed.
  const peersKey = (peers) => JSON.stringify(peers && peers.peers
    ? peers.peers.map((p) => [p.id, st.peerNames[p.id] || '', peerWords(p)]) : []);

  // pollPeers reads the connected laptops again and redraws their block
  // alone, only when what it shows changed (the rest of the view, and
  // the focus, stay as they are). A full refresh under way draws them
  // itself.
  async function pollPeers() {
    const id = st.session;
    if (!id || !st.teacher || st.busy) return;
    const peers = await fetch('/classroom/v0/peers?' + q(id), { headers: { Accept: 'application/json' } })
      .then((r) => (r.ok ? r.json() : null)).catch(() => null);
    const box = document.getElementById('peers');
    if (!peers || !box || st.busy || st.session !== id || !st.teacher) return;
    const key = peersKey(peers);
    if (box.getAttribute('data-peers') === key) return;
    box.setAttribute('data-peers', key);
    box.replaceChildren(...peersBlock(peers));
  }

  function peerWords(p) {
    if (!p.announced) return 'has not announced this session yet';
    const w = [];
    w.push(p.behind === 0 ? 'up to date' : 'behind by ' + p.behind + (p.behind === 1 ? ' entry' : ' entries'));
    if (p.ahead) w.push('holds ' + p.ahead + ' newer ' + (p.ahead === 1 ? 'head' : 'heads') + ' this laptop lacks');
    return w.join('; ');
  }

  async function checkpoint(id) {
    const b = document.getElementById('checkpoint');
    if (b) b.disabled = true;
    const res = await post('/classroom/v0/checkpoint', { session: id }).catch((e) => ({ ok: false, body: { detail: e.message } }));
    st.reason = res.ok
      ? 'checkpoint of ' + res.body.checkpoint.size + ' entries signed; the figures it covers are final advisory.'
      : 'no checkpoint: ' + (res.body.detail || res.status);
    await refresh();
    const f = document.getElementById('checkpoint');
    if (f) f.focus();
  }

  // ---- law, roster, branches ----------------------------------------

  function lawNode(n, depth, session, canPropose) {
    if (!n || depth > 12) return null;
    const kids = (n.children || []).map((c) => lawNode(c, depth + 1, session, canPropose));
    const leaf = (n.children || []).length === 0 && n.kind !== 'root';
    const tag = n.nid.replace(/[^A-Za-z0-9]/g, '_');
    const drafting = st.draft && st.draft.nid === n.nid;
    return el('li', { 'data-nid': n.nid },
      n.heading ? el('span', { class: 'heading', text: n.heading + ' ' }) : null,
      n.text ? el('span', { class: 'law-text', text: n.text }) : null,
      el('span', { class: 'id', text: ' ' + n.nid }),
      leaf && canPropose && !drafting
        ? [' ', el('button', { type: 'button', class: 'propose', id: 'propose-' + tag, 'aria-label': 'Propose a change to ' + (n.heading || n.nid),
          onclick: () => { st.draft = { nid: n.nid, heading: n.heading || n.nid, text: n.text || '' }; st.clear = ['draft-text', 'draft-summary']; refresh().then(() => { const f = document.getElementById('draft-text'); if (f) f.focus(); }); } }, 'Propose a change')]
        : null,
      drafting ? draftForm(session, n) : null,
      kids.length ? el('ol', null, kids) : null);
  }

  function draftForm(session, n) {
    const d = st.draft;
    const planned = !!d.plan;
    const parts = [
      el('h3', { text: 'Your amendment to ' + d.heading }),
      el('div', { class: 'field' }, el('label', { for: 'draft-text', text: 'New text of ' + d.heading }),
        el('textarea', { id: 'draft-text', rows: '3', readonly: planned, 'data-keep': planned ? 'no' : null }, planned ? d.plan.text : d.text)),
      el('div', { class: 'field' }, el('label', { for: 'draft-summary', text: 'Your summary (optional; shown as yours)' }),
        el('input', { id: 'draft-summary', type: 'text', maxlength: '280', readonly: planned, value: planned ? d.plan.summary : '', 'data-keep': planned ? 'no' : null })),
    ];
    if (!planned) {
      parts.push(el('div', { class: 'buttons' },
        el('button', { type: 'button', id: 'draft-preview', onclick: () => previewDraft(session) }, 'Show the change'),
        el('button', { type: 'button', id: 'draft-cancel', onclick: () => { st.draft = null; refresh(); } }, 'Cancel')));
    } else {
      parts.push(el('p', null, 'Nothing is signed yet. Signing opens merge request ', el('span', { class: 'id', id: 'draft-mr', text: d.plan.mr }),
        ' into the law, voted on by the ' + d.plan.electorate + ' members of the roster now (' + d.plan.transactions + ' transactions signed with your key).'));
      parts.push(el('pre', { class: 'diff', id: 'draft-diff', tabindex: '0', 'aria-label': 'What your amendment changes (diff)', text: d.plan.diff }));
      parts.push(el('div', { class: 'buttons' },
        el('button', { type: 'button', id: 'draft-sign', onclick: () => signDraft(session) }, 'Sign and open the merge request'),
        el('button', { type: 'button', id: 'draft-edit', onclick: () => { st.draft.text = d.plan.text; st.draft.plan = null; refresh(); } }, 'Edit again'),
        el('button', { type: 'button', id: 'draft-cancel', onclick: () => { st.draft = null; refresh(); } }, 'Cancel')));
    }
    if (d.error) parts.push(el('p', { class: 'error', role: 'alert', text: d.error }));
    return el('div', { class: 'draft', id: 'draft' }, parts);
  }

  async function previewDraft(session) {
    const text = document.getElementById('draft-text').value;
    const summary = document.getElementById('draft-summary').value;
    const res = await post('/classroom/v0/propose', { session, nid: st.draft.nid, text, summary, sign: false })
      .catch((e) => ({ ok: false, body: { detail: e.message } }));
    st.draft.text = text;
    st.draft.error = res.ok ? '' : 'No change to show: ' + problem(res);
    st.draft.plan = res.ok ? Object.assign({ text, summary }, res.body) : null;
    await refresh();
    const f = document.getElementById(res.ok ? 'draft-sign' : 'draft-text');
    if (f) f.focus();
  }

  async function signDraft(session) {
    const p = st.draft.plan;
    const res = await post('/classroom/v0/propose', { session, nid: st.draft.nid, text: p.text, summary: p.summary, sign: true, mr: p.mr })
      .catch((e) => ({ ok: false, body: { detail: e.message } }));
    if (res.ok) {
      st.draft = null;
      st.clear = ['draft-text', 'draft-summary'];
      st.reason = 'your merge request ' + short(p.mr) + ' is open: it is below, ready for votes.';
    } else {
      st.draft.plan = null;
      st.draft.error = 'Not opened: ' + problem(res);
    }
    await refresh();
    const f = document.querySelector('article.mr[data-mr="' + p.mr + '"] h3');
    if (res.ok && f) {
      f.setAttribute('tabindex', '-1');
      f.focus();
    }
  }

  function lawSection(law, session, member) {
    const canPropose = member && !READONLY && !!VOTER;
    return el('section', { 'aria-labelledby': 'h-law', class: 'law' },
      el('h2', { id: 'h-law', text: 'The law in force' }),
      law.error
        ? el('p', { text: 'No law to show: ' + law.error.message })
        : [el('p', null, finality(law.finality), '. Snapshot ', el('span', { class: 'id', text: short(law.snapshot) })),
          canPropose ? el('p', { class: 'hint', text: 'To propose an amendment, edit a section\'s text: you see the change before you sign it, and it becomes law only if the class approves it.' }) : null,
          el('ol', null, lawNode(law.root, 0, session, canPropose))]);
  }

  function rosterSection(s) {
    const roster = s.groups.find((g) => g.id === 'roster');
    return el('section', { 'aria-labelledby': 'h-roster' },
      el('h2', { id: 'h-roster', text: 'Roster' + (roster ? ' (' + roster.members.length + ' members)' : '') }),
      roster ? el('ul', { class: 'roster' }, roster.members.map((k) => el('li', null, keyLabel(k)))) : el('p', { text: 'No roster group yet.' }),
      roster && roster.flags.length ? roster.flags.map(flagLine) : null);
  }

  function branchSection(s) {
    return el('section', { 'aria-labelledby': 'h-branches' },
      el('h2', { id: 'h-branches', text: 'Branches (' + s.branches.length + ')' }),
      el('div', { class: 'table-wrap' }, el('table', null,
        el('caption', { text: 'Branches of the session, their owners and heads' }),
        el('thead', null, el('tr', null, ['Branch', 'Owner', 'Heads', 'Notes'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', null, s.branches.map((b) => el('tr', null,
          el('td', { text: b.name + (b.protected ? ' (protected)' : '') }),
          el('td', { text: b.owner }),
          el('td', null, b.heads.map((h) => el('span', { class: 'id', text: short(h) + ' ' }))),
          el('td', null, b.flags.length ? b.flags.map(flagLine) : 'none')))))));
  }

  window.addEventListener('hashchange', route);
  route();
})();
