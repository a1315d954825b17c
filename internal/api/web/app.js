// The Talaria web chat: keeps the API key in localStorage, lists sessions,
// starts runs and follows their events (fetch + a stream reader, since
// EventSource cannot send the key), and answers approvals and questions.
// Model output reaches the page only through TalariaMarkdown.render
// (escaped first) or textContent.
"use strict";

(function () {
  var STORE = {
    key: "talaria.key",
    session: "talaria.session",
    run: "talaria.run",
    lastEvent: "talaria.lastEventId",
    turn: "talaria.turn"
  };

  function $(id) { return document.getElementById(id); }

  function store(name, value) {
    try {
      if (value === null || value === undefined || value === "") {
        localStorage.removeItem(name);
      } else {
        localStorage.setItem(name, value);
      }
    } catch (e) { /* storage may be disabled: the page still works */ }
  }
  function stored(name) {
    try { return localStorage.getItem(name) || ""; } catch (e) { return ""; }
  }

  var state = {
    key: "",
    session: "",
    run: null, // the run being shown: {id, lastEventId, parts, userText, ended}
    busy: false
  };

  // ---- HTTP ------------------------------------------------------------

  // ApiError is an answer that is not 2xx.
  function ApiError(status, message, code) {
    this.status = status;
    this.message = message;
    this.code = code || "";
  }

  function api(method, path, body, opts) {
    opts = opts || {};
    var headers = { "Authorization": "Bearer " + state.key };
    var init = { method: method, headers: headers, cache: "no-store", signal: opts.signal };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (opts.headers) {
      Object.keys(opts.headers).forEach(function (k) { headers[k] = opts.headers[k]; });
    }
    return fetch(path, init).then(function (resp) {
      if (opts.raw && resp.ok) {
        return resp;
      }
      return resp.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!resp.ok) {
          var msg = data && data.error && data.error.message ? data.error.message : (resp.status + " " + resp.statusText);
          var code = data && data.error ? data.error.code : "";
          if (resp.status === 401) {
            keyRefused();
          }
          throw new ApiError(resp.status, msg, code);
        }
        return data;
      });
    });
  }

  function showError(err) {
    var el = $("error");
    if (!err) {
      el.hidden = true;
      el.textContent = "";
      return;
    }
    el.textContent = err.message || String(err);
    el.hidden = false;
  }

  function setStatus(text, kind) {
    var el = $("status");
    el.textContent = text;
    el.className = kind || "";
  }

  // ---- the key ---------------------------------------------------------

  // keyFromFragment takes a key handed in the address (#key=KEY), keeps it
  // and removes it from the address bar.
  function keyFromFragment() {
    var hash = location.hash || "";
    var m = /^#(?:.*&)?key=([^&]*)/.exec(hash);
    if (!m) {
      return;
    }
    var key = "";
    try { key = decodeURIComponent(m[1]); } catch (e) { key = m[1]; }
    if (key) {
      store(STORE.key, key);
    }
    history.replaceState(null, "", location.pathname + location.search);
  }

  function showKeyPanel(message) {
    $("layout").hidden = true;
    $("forget-key").hidden = true;
    $("key-panel").hidden = false;
    var err = $("key-error");
    err.textContent = message || "";
    err.hidden = !message;
    setStatus("Enter the API key");
    $("key").focus();
  }

  function keyRefused() {
    if (!state.key) {
      return;
    }
    state.key = "";
    store(STORE.key, "");
    stopFollowing();
    showKeyPanel("The server refused the key: check it and enter it again.");
  }

  function saveKey() {
    var key = $("key").value.trim();
    if (!key) {
      showKeyPanel("Enter a key.");
      return;
    }
    store(STORE.key, key);
    $("key").value = "";
    start();
  }

  function forgetKey() {
    stopFollowing();
    state.key = "";
    store(STORE.key, "");
    showKeyPanel("");
  }

  // ---- sessions --------------------------------------------------------

  function loadSessions() {
    var list = $("sessions");
    return api("GET", "/api/sessions?limit=50").then(function (data) {
      list.textContent = "";
      var items = (data && data.data) || [];
      if (!items.length) {
        list.appendChild(note("No sessions yet"));
      }
      items.forEach(function (s) {
        var li = document.createElement("li");
        var b = document.createElement("button");
        b.type = "button";
        b.className = "session" + (s.id === state.session ? " current" : "");
        b.dataset.id = s.id;
        var title = document.createElement("span");
        title.className = "session-title";
        title.textContent = s.title || clip(s.first_message || "") || s.id;
        var meta = document.createElement("span");
        meta.className = "session-meta";
        var turns = s.turn_count || s.turns || 0;
        meta.textContent = formatTime(s.updated_at || s.created_at) + (turns ? " · " + turns + (turns === 1 ? " turn" : " turns") : "");
        b.appendChild(title);
        b.appendChild(meta);
        b.addEventListener("click", function () { openSession(s.id); });
        li.appendChild(b);
        list.appendChild(li);
      });
    }).catch(function (err) {
      if (err instanceof ApiError && err.status === 401) {
        return;
      }
      list.textContent = "";
      list.appendChild(note(err instanceof ApiError && (err.status === 404 || err.status === 405) ? "Sessions unavailable" : "Sessions unavailable: " + err.message));
    });
  }

  function note(text) {
    var li = document.createElement("li");
    li.className = "note";
    li.textContent = text;
    return li;
  }

  function formatTime(s) {
    if (!s) {
      return "";
    }
    var d = new Date(s);
    if (isNaN(d.getTime())) {
      return "";
    }
    var now = new Date();
    if (d.toDateString() === now.toDateString()) {
      return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    }
    return d.toLocaleDateString();
  }

  function openSession(id) {
    if (state.busy) {
      setStatus("A turn is running: stop it or wait before switching");
      return;
    }
    state.session = id;
    store(STORE.session, id);
    $("sidebar").classList.remove("open");
    markCurrentSession();
    return loadMessages(id);
  }

  function markCurrentSession() {
    var buttons = $("sessions").querySelectorAll(".session");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].classList.toggle("current", buttons[i].dataset.id === state.session);
    }
  }

  function newChat() {
    if (state.busy) {
      setStatus("A turn is running: stop it or wait before starting a new chat");
      return;
    }
    state.session = "";
    store(STORE.session, "");
    $("messages").textContent = "";
    $("sidebar").classList.remove("open");
    markCurrentSession();
    showError(null);
    setStatus("New chat");
    $("input").focus();
  }

  // loadMessages shows a session's stored messages; it resolves to them
  // (an empty list when they cannot be read).
  function loadMessages(id) {
    var box = $("messages");
    box.textContent = "";
    setStatus("Loading the session…");
    return api("GET", "/api/sessions/" + encodeURIComponent(id) + "/messages").then(function (data) {
      var items = (data && data.data) || [];
      var prev = null;
      items.forEach(function (m, i) {
        var el = renderStored(m, prev);
        if (el) {
          if (el !== prev) {
            el.dataset.index = String(i);
          }
          prev = el;
        }
      });
      scrollDown(true);
      setStatus("Ready");
      return items;
    }).catch(function (err) {
      if (!(err instanceof ApiError && err.status === 401)) {
        var p = document.createElement("div");
        p.className = "notice";
        p.textContent = err instanceof ApiError && err.status === 404 ? "This session's messages are unavailable." : "Could not load the messages: " + err.message;
        box.appendChild(p);
        setStatus("Ready");
      }
      return [];
    });
  }

  // renderStored shows a stored message; the assistant messages of one
  // turn (a tool call, then the reply) share a bubble.
  function renderStored(m, prev) {
    if (m.role === "user") {
      return addUserMessage(textOf(m.content));
    } else if (m.role === "assistant") {
      var text = textOf(m.content);
      var calls = m.tool_calls || [];
      if (!text && !calls.length) {
        return;
      }
      var el = prev && prev.classList.contains("assistant") ? prev : newAssistant();
      if (text) {
        var div = document.createElement("div");
        div.className = "md";
        div.innerHTML = window.TalariaMarkdown.render(text);
        el.appendChild(div);
      }
      calls.forEach(function (c) {
        var fn = c["function"] || c;
        var line = document.createElement("div");
        // How the call ended is its result's, which follows: until then
        // the line claims no outcome.
        line.className = "tool-line";
        line.dataset.callId = c.id || "";
        line.dataset.what = (fn.name || "tool") + summarize(fn.arguments);
        line.textContent = line.dataset.what;
        el.appendChild(line);
      });
      return el;
    } else if (m.role === "tool" && prev && prev.classList.contains("assistant")) {
      storedOutcome(prev, m);
      return prev;
    }
    return null;
  }

  // storedOutcome marks the tool line of the call a stored tool result
  // answers with how the call ended (the result's outcome).
  function storedOutcome(el, m) {
    var lines = el.querySelectorAll(".tool-line");
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      if (line.dataset.callId === (m.tool_call_id || "") && !line.dataset.outcome) {
        var state = OUTCOME_STATE[m.outcome] || "done";
        line.dataset.outcome = m.outcome || "done";
        line.className = "tool-line " + state;
        line.textContent = toolText({ name: line.dataset.what, summary: "", state: state });
        return;
      }
    }
  }

  // OUTCOME_STATE is the tool line's state for a stored result's outcome.
  var OUTCOME_STATE = { done: "done", failed: "failed", stopped: "stopped", not_run: "refused", unknown: "unknown" };

  function textOf(content) {
    if (typeof content === "string") {
      return content;
    }
    if (Array.isArray(content)) {
      return content.map(function (p) { return typeof p === "string" ? p : (p && p.text) || ""; }).join("");
    }
    return "";
  }

  // summarize is ": <what the call does>" from its JSON arguments.
  function summarize(args) {
    if (!args) {
      return "";
    }
    var v = args;
    if (typeof args === "string") {
      try { v = JSON.parse(args); } catch (e) { return ": " + clip(args); }
    }
    if (v && typeof v === "object") {
      var keys = ["command", "path", "query", "url", "pattern", "question", "text"];
      for (var i = 0; i < keys.length; i++) {
        if (typeof v[keys[i]] === "string") {
          return ": " + clip(v[keys[i]]);
        }
      }
      for (var k in v) {
        if (Object.prototype.hasOwnProperty.call(v, k) && typeof v[k] === "string") {
          return ": " + clip(v[k]);
        }
      }
    }
    return "";
  }

  function clip(s) {
    s = String(s).replace(/\s+/g, " ").trim();
    return s.length > 160 ? s.slice(0, 157) + "…" : s;
  }

  // ---- messages --------------------------------------------------------

  function addUserMessage(text) {
    var el = document.createElement("div");
    el.className = "msg user";
    el.textContent = text;
    $("messages").appendChild(el);
    scrollDown(true);
    return el;
  }

  function newAssistant() {
    var el = document.createElement("div");
    el.className = "msg assistant";
    $("messages").appendChild(el);
    return el;
  }

  function scrollDown(force) {
    var box = $("messages");
    var near = box.scrollHeight - box.scrollTop - box.clientHeight < 120;
    if (force || near) {
      box.scrollTop = box.scrollHeight;
    }
  }

  // ---- a run -----------------------------------------------------------
  //
  // A run's turn is kept as parts: {t: "text", text}, {t: "reasoning",
  // text}, {t: "tool", id, name, summary, state, note} and {t: "note",
  // text}. The parts are kept in localStorage with the last event id, so
  // that a reload shows what was seen and resumes after it.

  var follow = null; // {run, abort, poll, renderPending}

  function beginRun(run) {
    state.run = run;
    state.busy = true;
    store(STORE.run, run.id);
    store(STORE.lastEvent, String(run.lastEventId || 0));
    run.el = newAssistant();
    run.el.classList.add("streaming");
    renderRun(run);
    setBusy(true);
    setStatus("Running…", "running");
    followRun(run);
  }

  function setBusy(busy) {
    $("run-controls").hidden = !busy;
    $("send").disabled = busy;
    $("stop").disabled = !busy;
    if (busy) {
      $("steer-input").value = "";
    } else {
      hideApproval();
      hideQuestion();
    }
  }

  function saveTurn(run) {
    store(STORE.lastEvent, String(run.lastEventId || 0));
    try {
      localStorage.setItem(STORE.turn, JSON.stringify({ id: run.id, userText: run.userText, parts: run.parts, decided: run.decided }));
    } catch (e) { /* too large or disabled: a reload then replays the events */ }
  }

  function scheduleRender(run) {
    if (run.renderPending) {
      return;
    }
    run.renderPending = true;
    requestAnimationFrame(function () {
      run.renderPending = false;
      renderRun(run);
    });
  }

  function renderRun(run) {
    var el = run.el;
    if (!el) {
      return;
    }
    el.textContent = "";
    run.parts.forEach(function (p) {
      var div = document.createElement("div");
      if (p.t === "text") {
        div.className = "md";
        div.innerHTML = window.TalariaMarkdown.render(p.text);
      } else if (p.t === "reasoning") {
        div.className = "reasoning";
        div.textContent = p.text;
      } else if (p.t === "tool") {
        div.className = "tool-line " + p.state;
        div.dataset.callId = p.id || "";
        div.textContent = toolText(p);
      } else {
        div.className = "run-note";
        div.textContent = p.text;
      }
      el.appendChild(div);
    });
    if (run.ended) {
      el.classList.remove("streaming");
    }
    scrollDown(false);
  }

  function toolText(p) {
    var what = (p.name || "tool") + (p.summary || "");
    switch (p.state) {
      case "running": return "running " + what;
      case "failed": return what + " — failed";
      case "refused": return what + " — refused: " + (p.note || "not run");
      case "stopped": return what + " — stopped";
      case "unknown": return what + " — outcome unknown";
      default: return what + " — done";
    }
  }

  function addText(run, kind, text) {
    var last = run.parts[run.parts.length - 1];
    if (last && last.t === kind) {
      last.text += text;
    } else {
      run.parts.push({ t: kind, text: text });
    }
  }

  // handleEvent applies one event of the run's stream.
  function handleEvent(run, ev) {
    var d = {};
    try { d = ev.data ? JSON.parse(ev.data) : {}; } catch (e) { d = { text: ev.data }; }
    switch (ev.event) {
      case "attempt":
        // A model call's attempt streams its text from the start: a new
        // attempt of the same call replaces what the earlier one showed.
        // (Its text may have gone on the last part before it: that part
        // is cut back to where the call began.)
        if (run.attempt && run.attempt.call === d.call) {
          run.parts.length = run.attempt.len;
          var before = run.parts[run.parts.length - 1];
          if (before && typeof before.text === "string") {
            before.text = before.text.slice(0, run.attempt.tail);
          }
          renderRun(run);
        } else {
          var last = run.parts[run.parts.length - 1];
          run.attempt = { call: d.call, len: run.parts.length, tail: last && typeof last.text === "string" ? last.text.length : 0 };
        }
        break;
      case "delta":
        addText(run, "text", d.text || "");
        break;
      case "reasoning":
        addText(run, "reasoning", d.text || "");
        break;
      case "tool_start":
        run.parts.push({ t: "tool", id: d.id, name: d.name, summary: summarize(d.args), state: "running" });
        setStatus("Running " + (d.name || "a tool") + "…", "running");
        break;
      case "tool_end":
        var p = findTool(run, d.id, d.name);
        if (!p) {
          p = { t: "tool", id: d.id, name: d.name, summary: "", state: "running" };
          run.parts.push(p);
        }
        p.state = d.refused ? "refused" : (d.failed ? "failed" : "done");
        p.note = d.refused || "";
        setStatus("Running…", "running");
        break;
      case "status":
        if (d.text) {
          setStatus(clip(d.text), "running");
        }
        break;
      case "wait":
        if (d.text) {
          setStatus(clip(d.text), "waiting");
        }
        break;
      case "approval":
        showApproval(run, d);
        break;
      case "approval_decided":
        decided(run, d.call_id, "approval");
        if (d.choice) {
          run.parts.push({ t: "note", text: d.choice === "deny" ? "command denied" : "command approved (" + d.choice + ")" });
        }
        break;
      case "question":
        showQuestion(run, d);
        break;
      case "answered":
        decided(run, d.call_id, "question");
        break;
      case "done":
        finishRun(run, d.stop_reason || "");
        return;
    }
    scheduleRender(run);
  }

  function findTool(run, id, name) {
    for (var i = run.parts.length - 1; i >= 0; i--) {
      var p = run.parts[i];
      if (p.t === "tool" && p.state === "running" && (id ? p.id === id : p.name === name)) {
        return p;
      }
    }
    return null;
  }

  // followRun reads the run's events until its done event, reconnecting
  // after a drop with Last-Event-ID, and polls the run meanwhile.
  function followRun(run) {
    stopFollowing();
    var ctl = new AbortController();
    var f = { run: run, ctl: ctl, poll: null };
    follow = f;
    var failures = 0;

    function connect() {
      if (run.ended || follow !== f) {
        return;
      }
      var headers = {};
      if (run.lastEventId > 0) {
        headers["Last-Event-ID"] = String(run.lastEventId);
      }
      api("GET", "/v1/runs/" + encodeURIComponent(run.id) + "/events", undefined, { signal: ctl.signal, headers: headers, raw: true })
        .then(function (resp) {
          failures = 0;
          return readSSE(resp, ctl.signal, function (ev) {
            if (ev.id && /^\d+$/.test(ev.id)) {
              run.lastEventId = Number(ev.id);
            }
            handleEvent(run, ev);
            if (!run.ended) {
              saveTurn(run);
            }
          });
        })
        .then(function () { retry(); }, function (err) {
          if (ctl.signal.aborted) {
            return;
          }
          if (err instanceof ApiError && err.status === 401) {
            return;
          }
          if (err instanceof ApiError && err.status === 404) {
            finishRun(run, "unknown");
            return;
          }
          retry();
        });
    }
    function retry() {
      if (run.ended || follow !== f) {
        return;
      }
      failures++;
      setStatus("Reconnecting…", "waiting");
      setTimeout(connect, Math.min(500 * failures, 5000));
    }
    connect();
    f.poll = setInterval(function () { pollRun(run); }, 1000);
    pollRun(run);
  }

  function stopFollowing() {
    if (!follow) {
      return;
    }
    follow.ctl.abort();
    clearInterval(follow.poll);
    follow = null;
  }

  // readSSE reads a text/event-stream body, calling onEvent with each
  // {id, event, data}; it resolves when the stream ends.
  function readSSE(resp, signal, onEvent) {
    var reader = resp.body.getReader();
    var decoder = new TextDecoder();
    var buf = "";
    var ev = { id: "", event: "", data: [] };
    var any = false;

    function line(l) {
      if (l === "") {
        if (any) {
          onEvent({ id: ev.id, event: ev.event || "message", data: ev.data.join("\n") });
        }
        ev = { id: "", event: "", data: [] };
        any = false;
        return;
      }
      if (l.charAt(0) === ":") {
        return;
      }
      var i = l.indexOf(":");
      var field = i < 0 ? l : l.slice(0, i);
      var value = i < 0 ? "" : l.slice(i + 1);
      if (value.charAt(0) === " ") {
        value = value.slice(1);
      }
      if (field === "id") {
        ev.id = value;
        any = true;
      } else if (field === "event") {
        ev.event = value;
        any = true;
      } else if (field === "data") {
        ev.data.push(value);
        any = true;
      }
    }

    function pump() {
      return reader.read().then(function (r) {
        if (r.done) {
          return;
        }
        buf += decoder.decode(r.value, { stream: true });
        var m;
        var re = /\r\n|\r|\n/g;
        var start = 0;
        while ((m = re.exec(buf)) !== null) {
          // A lone \r at the end may be the first half of \r\n.
          if (m[0] === "\r" && m.index === buf.length - 1) {
            break;
          }
          line(buf.slice(start, m.index));
          start = m.index + m[0].length;
          if (signal.aborted || (state.run && state.run.ended)) {
            reader.cancel().catch(function () {});
            return;
          }
        }
        buf = buf.slice(start);
        return pump();
      });
    }
    return pump();
  }

  // pollRun reads GET /v1/runs/{id}: the pending approval or question (the
  // event stream may not carry them), and the end of a run whose stream
  // said nothing of it.
  function pollRun(run) {
    if (run.ended || run.polling) {
      return;
    }
    run.polling = true;
    api("GET", "/v1/runs/" + encodeURIComponent(run.id)).then(function (r) {
      run.polling = false;
      if (run.ended) {
        return;
      }
      if (r.session_id && !state.session) {
        state.session = r.session_id;
        store(STORE.session, r.session_id);
      }
      if (r.pending_approval) {
        showApproval(run, r.pending_approval);
      } else if (shownApproval && !r.pending_approval && r.status === "running") {
        hideApproval();
      }
      if (r.pending_question) {
        showQuestion(run, r.pending_question);
      } else if (shownQuestion && r.status === "running") {
        hideQuestion();
      }
      if (r.status && r.status !== "running") {
        // Ended: the stream's done event should follow; if it does not
        // come soon, end from what the run says.
        if (!run.endSeen) {
          run.endSeen = Date.now();
        } else if (Date.now() - run.endSeen > 2500) {
          if (!hasText(run) && r.final_text) {
            run.parts.push({ t: "text", text: r.final_text });
          }
          finishRun(run, r.stop_reason || r.status);
        }
      }
    }, function (err) {
      run.polling = false;
      if (err instanceof ApiError && err.status === 404) {
        finishRun(run, "unknown");
      }
    });
  }

  function hasText(run) {
    return run.parts.some(function (p) { return p.t === "text" && p.text; });
  }

  function finishRun(run, reason) {
    if (run.ended) {
      return;
    }
    run.ended = true;
    if (follow && follow.run === run) {
      stopFollowing();
    }
    store(STORE.run, "");
    store(STORE.lastEvent, "");
    store(STORE.turn, "");
    state.busy = false;
    setBusy(false);
    var ok = reason === "text_response" || reason === "completed";
    var text = ok ? "Done" : "Run ended: " + reason.replace(/_/g, " ");
    if (!ok) {
      run.parts.push({ t: "note", text: text.toLowerCase() });
    }
    // A tool still running when its run ended was stopped with it.
    run.parts.forEach(function (p) {
      if (p.t === "tool" && p.state === "running") {
        p.state = "stopped";
      }
    });
    renderRun(run);
    setStatus(text, ok ? "" : "ended");
    run.el.dataset.stopReason = reason;
    loadSessions();
  }

  // ---- approvals and questions ----------------------------------------

  var shownApproval = "";
  var shownQuestion = "";

  function showApproval(run, a) {
    if (!a || !a.call_id || run.ended || run.decided.indexOf(a.call_id) >= 0) {
      return;
    }
    if (shownApproval === a.call_id) {
      return;
    }
    shownApproval = a.call_id;
    $("approval-command").textContent = a.command || "";
    var why = [a.reason, a.rule ? "rule: " + a.rule : ""].filter(Boolean).join(" · ");
    $("approval-reason").textContent = why;
    $("approve-session").title = a.pattern ? "Allow “" + a.pattern + "” for the rest of this session" : "";
    $("approve-always").title = a.pattern ? "Always allow “" + a.pattern + "”" : "";
    setApprovalButtons(false);
    $("approval").hidden = false;
    setStatus("Waiting for your approval", "waiting");
    scrollDown(true);
  }

  function hideApproval() {
    shownApproval = "";
    $("approval").hidden = true;
  }

  function setApprovalButtons(disabled) {
    ["approve-once", "approve-session", "approve-always", "deny"].forEach(function (id) { $(id).disabled = disabled; });
  }

  function decided(run, callId, what) {
    if (callId && run.decided.indexOf(callId) < 0) {
      run.decided.push(callId);
    }
    if (what === "approval" && (!callId || callId === shownApproval)) {
      hideApproval();
    }
    if (what === "question" && (!callId || callId === shownQuestion)) {
      hideQuestion();
    }
  }

  function approve(choice) {
    var run = state.run;
    if (!run || !shownApproval) {
      return;
    }
    var callId = shownApproval;
    setApprovalButtons(true);
    api("POST", "/v1/runs/" + encodeURIComponent(run.id) + "/approval", { choice: choice, call_id: callId }).then(function () {
      decided(run, callId, "approval");
      saveTurn(run);
      setStatus(choice === "deny" ? "Denied" : "Approved", "running");
    }, function (err) {
      setApprovalButtons(false);
      showError(err);
    });
  }

  function showQuestion(run, q) {
    if (!q || !q.call_id || run.ended || run.decided.indexOf(q.call_id) >= 0) {
      return;
    }
    if (shownQuestion === q.call_id) {
      return;
    }
    shownQuestion = q.call_id;
    $("question-text").textContent = q.question || "";
    var choices = $("question-choices");
    choices.textContent = "";
    (q.choices || []).forEach(function (c) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "choice";
      b.textContent = c;
      b.addEventListener("click", function () { answer(c); });
      choices.appendChild(b);
    });
    choices.hidden = !(q.choices && q.choices.length);
    $("answer-input").value = "";
    $("answer-send").disabled = false;
    $("question").hidden = false;
    setStatus("Waiting for your answer", "waiting");
    $("answer-input").focus();
    scrollDown(true);
  }

  function hideQuestion() {
    shownQuestion = "";
    $("question").hidden = true;
  }

  function answer(text) {
    var run = state.run;
    text = (text || "").trim();
    if (!run || !shownQuestion || !text) {
      return;
    }
    var callId = shownQuestion;
    $("answer-send").disabled = true;
    api("POST", "/v1/runs/" + encodeURIComponent(run.id) + "/answer", { text: text, call_id: callId }).then(function () {
      decided(run, callId, "question");
      run.parts.push({ t: "note", text: "answered: " + clip(text) });
      scheduleRender(run);
      saveTurn(run);
      setStatus("Running…", "running");
    }, function (err) {
      $("answer-send").disabled = false;
      showError(err);
    });
  }

  // ---- sending, stopping, steering -----------------------------------

  function send() {
    var input = $("input");
    var text = input.value;
    if (!text.trim() || state.busy) {
      return;
    }
    showError(null);
    $("send").disabled = true;
    var body = { input: text };
    if (state.session) {
      body.session_id = state.session;
    }
    api("POST", "/v1/runs", body).then(function (r) {
      input.value = "";
      if (r.session_id && r.session_id !== state.session) {
        state.session = r.session_id;
        store(STORE.session, r.session_id);
      }
      addUserMessage(text);
      beginRun({ id: r.run_id, lastEventId: 0, parts: [], userText: text, decided: [], ended: false });
      loadSessions();
    }, function (err) {
      $("send").disabled = false;
      showError(err);
    });
  }

  function stop() {
    var run = state.run;
    if (!run || run.ended) {
      return;
    }
    $("stop").disabled = true;
    setStatus("Stopping…", "waiting");
    api("POST", "/v1/runs/" + encodeURIComponent(run.id) + "/stop", {}).catch(function (err) {
      if (!(err instanceof ApiError && err.status === 409)) {
        $("stop").disabled = false;
        showError(err);
      }
    });
  }

  function steer() {
    var run = state.run;
    var input = $("steer-input");
    var text = input.value.trim();
    if (!run || run.ended || !text) {
      return;
    }
    $("steer-send").disabled = true;
    api("POST", "/v1/runs/" + encodeURIComponent(run.id) + "/steer", { text: text }).then(function () {
      input.value = "";
      run.parts.push({ t: "note", text: "steered: " + clip(text) });
      scheduleRender(run);
      saveTurn(run);
    }, showError).then(function () { $("steer-send").disabled = false; });
  }

  // ---- start -----------------------------------------------------------

  // resume reconnects to the run stored by an earlier page, if it still
  // runs: the parts seen are shown again and the events resume after the
  // last id seen.
  function resume(messages) {
    var id = stored(STORE.run);
    if (!id) {
      return Promise.resolve();
    }
    return api("GET", "/v1/runs/" + encodeURIComponent(id)).then(function (r) {
      if (r.status !== "running") {
        store(STORE.run, "");
        store(STORE.lastEvent, "");
        store(STORE.turn, "");
        return;
      }
      var saved = null;
      try { saved = JSON.parse(stored(STORE.turn) || "null"); } catch (e) { saved = null; }
      var run = { id: id, lastEventId: 0, parts: [], userText: "", decided: [], ended: false };
      if (saved && saved.id === id) {
        run.parts = saved.parts || [];
        run.userText = saved.userText || "";
        run.decided = saved.decided || [];
        run.lastEventId = Number(stored(STORE.lastEvent)) || 0;
      }
      if (r.session_id && r.session_id !== state.session) {
        state.session = r.session_id;
        store(STORE.session, r.session_id);
      }
      // What the session stored of the running turn is shown again by
      // its parts: drop it from the history shown.
      if (run.userText && messages && r.session_id === state.session) {
        for (var i = messages.length - 1; i >= 0; i--) {
          var m = messages[i];
          if (m.role === "user" && textOf(m.content).slice(-run.userText.length) === run.userText) {
            dropShownFrom(i);
            break;
          }
        }
      }
      if (run.userText) {
        addUserMessage(run.userText);
      }
      beginRun(run);
    }, function () {
      store(STORE.run, "");
      store(STORE.turn, "");
    });
  }

  // dropShownFrom removes the shown stored messages from index i on.
  function dropShownFrom(i) {
    var shown = $("messages").querySelectorAll(".msg[data-index]");
    for (var k = 0; k < shown.length; k++) {
      if (Number(shown[k].dataset.index) >= i) {
        shown[k].remove();
      }
    }
  }

  function start() {
    state.key = stored(STORE.key);
    if (!state.key) {
      showKeyPanel("");
      return;
    }
    $("key-panel").hidden = true;
    $("layout").hidden = false;
    $("forget-key").hidden = false;
    setStatus("Ready");
    state.session = stored(STORE.session);
    var sessions = loadSessions();
    var messages = state.session ? loadMessages(state.session) : Promise.resolve([]);
    Promise.all([sessions, messages]).then(function (all) { return resume(all[1]); });
    $("input").focus();
  }

  function bind() {
    $("save-key").addEventListener("click", saveKey);
    $("key").addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
        saveKey();
      }
    });
    $("forget-key").addEventListener("click", forgetKey);
    $("new-chat").addEventListener("click", newChat);
    $("send").addEventListener("click", send);
    $("input").addEventListener("keydown", function (e) {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        send();
      }
    });
    $("stop").addEventListener("click", stop);
    $("steer-send").addEventListener("click", steer);
    $("steer-input").addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
        steer();
      }
    });
    $("approve-once").addEventListener("click", function () { approve("once"); });
    $("approve-session").addEventListener("click", function () { approve("session"); });
    $("approve-always").addEventListener("click", function () { approve("always"); });
    $("deny").addEventListener("click", function () { approve("deny"); });
    $("answer-send").addEventListener("click", function () { answer($("answer-input").value); });
    $("answer-input").addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
        answer($("answer-input").value);
      }
    });
    $("toggle-sessions").addEventListener("click", function () {
      var open = $("sidebar").classList.toggle("open");
      $("toggle-sessions").setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  keyFromFragment();
  bind();
  start();
})();
