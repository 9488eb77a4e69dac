// The sandbox console's one script: live journal updates, copy as cURL, and the actions
// that go through the admin API (each destructive one asks first). Served from the
// simulator itself; the pages' Content Security Policy allows nothing else.
"use strict";

(() => {
  const csrf = document.querySelector('meta[name="sandbox-csrf"]')?.content;
  // The console's root as this browser reached it: a tenant's is under its prefix.
  const root = document.querySelector('meta[name="sandbox-root"]')?.content ?? "/__sandbox/";

  /** Shows a message in the page's status region (announced to screen readers). */
  function say(text, isError) {
    const status = document.getElementById("status");
    if (!status) return;
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  /** One admin API call from this page: JSON in, the reply's JSON (or nothing) out. */
  async function api(method, path, body) {
    const headers = { accept: "application/json" };
    if (csrf) headers["x-sandbox-csrf"] = csrf;
    const init = { method, headers, credentials: "same-origin" };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!response.ok) {
      const field = json?.field ? `${json.field}: ` : "";
      throw new Error(`${response.status}: ${field}${json?.message ?? text}`);
    }
    return json;
  }

  /** Runs an action; reloads the page when it changed something, or says what failed. */
  async function act(work, done) {
    try {
      await work();
      say(done);
      window.location.reload();
    } catch (error) {
      say(error.message, true);
    }
  }

  // Buttons that call the admin API: data-api="METHOD PATH", optional data-body and
  // data-confirm (asked first; nothing happens unless confirmed).
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-api]");
    if (!button) return;
    const question = button.dataset.confirm;
    if (question && !window.confirm(question)) {
      say("Nothing was changed.");
      return;
    }
    const [method, path] = button.dataset.api.split(" ");
    act(() => api(method, path, button.dataset.body), `${button.textContent.trim()}: done.`);
  });

  // A journal entry's request, reply and command, fetched when it is first opened (the
  // rows carry only their summaries). `toggle` does not bubble: caught on the way down.
  document.addEventListener("toggle", async (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open || !details.dataset.entry) return;
    const placeholder = details.querySelector(".exchange[aria-busy]");
    if (!placeholder || details.dataset.loading) return;
    details.dataset.loading = "yes";
    try {
      const response = await fetch(details.dataset.entry, { credentials: "same-origin" });
      const template = document.createElement("template");
      template.innerHTML = await response.text();
      const loaded = template.content.querySelector(".exchange");
      if (loaded) placeholder.replaceWith(loaded);
      else say(`The entry could not be read (HTTP ${response.status}).`, true);
    } catch {
      say("The entry could not be read: is the simulator running?", true);
    } finally {
      delete details.dataset.loading;
    }
  }, true);

  // Copy as cURL: the command shown beside the button.
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-copy]");
    if (!button) return;
    const command = document.getElementById(button.dataset.copy)?.textContent ?? "";
    try {
      await navigator.clipboard.writeText(command);
      say("The command was copied.");
    } catch {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      say("The command is selected: copy it with Ctrl+C.");
    }
  });

  // Reads a form built from a schema back into the JSON the admin API takes: each
  // control is named by its path (fault.kind) and says its type (data-type).
  function formJson(form) {
    const value = {};
    for (const control of form.querySelectorAll("[data-type]")) {
      const text = control.value.trim();
      if (text === "") continue;
      let item;
      switch (control.dataset.type) {
        case "integer":
        case "number":
          item = Number(text);
          break;
        case "boolean":
          item = text === "true";
          break;
        case "json":
          try {
            item = JSON.parse(text);
          } catch {
            item = text; // a bare word is meant as a string
          }
          break;
        default:
          item = text;
      }
      const path = control.name.split(".");
      let target = value;
      for (const key of path.slice(0, -1)) target = target[key] ??= {};
      target[path[path.length - 1]] = item;
    }
    return value;
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.id === "fault-form") {
      event.preventDefault();
      act(() => api("POST", form.dataset.post, formJson(form)), "The rule was added.");
    } else if (form.id === "clock-form") {
      event.preventDefault();
      const ms = Number(form.elements.amount.value) * Number(form.elements.unit.value);
      act(() => api("POST", form.dataset.post, { ms }), "The clock was advanced.");
    } else if (form.id === "seed-form") {
      event.preventDefault();
      const name = form.elements.name.value;
      if (!window.confirm(`Load the ${name} seed into the current state?`)) {
        say("Nothing was changed.");
        return;
      }
      act(() => api("POST", `${root}v1/seeds/${encodeURIComponent(name)}`), "The seed was loaded.");
    } else if (form.id === "import-form") {
      event.preventDefault();
      const file = form.elements.file.files[0];
      if (!file || !window.confirm(form.dataset.confirm)) {
        say("Nothing was changed.");
        return;
      }
      act(async () => api("PUT", form.dataset.put, await file.text()), "The state was imported.");
    } else if (form.classList.contains("sign-out")) {
      event.preventDefault();
      fetch(form.action, { method: "POST", headers: csrf ? { "x-sandbox-csrf": csrf } : {} })
        .then(() => window.location.assign(root));
    } else if (form.classList.contains("open-tenant")) {
      // The simulator's admin opens a tenant's console: the reply's cookie is a session of
      // that tenant's, for its prefix alone; then its console is shown.
      event.preventDefault();
      fetch(form.action, { method: "POST", headers: csrf ? { "x-sandbox-csrf": csrf } : {}, credentials: "same-origin" })
        .then((response) => {
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          window.location.assign(form.dataset.to);
        })
        .catch((error) => say(`The tenant's console could not be opened (${error.message}).`, true));
    }
  });

  // The journal: asks for what is newer than the newest entry shown, every half second
  // while the page is visible, one request at a time; keeps the newest entries only.
  const journal = document.getElementById("journal");
  if (journal) {
    const limit = 200;
    let busy = false;
    const count = document.getElementById("journal-count");
    async function poll() {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const after = journal.dataset.after;
        const response = await fetch(`${journal.dataset.rows}&after=${after}`, { credentials: "same-origin" });
        if (response.ok) {
          const template = document.createElement("template");
          template.innerHTML = await response.text();
          const rows = [...template.content.querySelectorAll("li.entry")];
          if (rows.length > 0) {
            journal.dataset.after = rows[0].dataset.seq;
            journal.prepend(...rows);
            while (journal.children.length > limit) journal.lastElementChild.remove();
            if (count) count.textContent = `${journal.children.length} shown, newest first (at most ${limit}); new requests appear as they arrive.`;
          }
        }
      } catch {
        // The simulator stopped or restarts: try again on the next tick.
      } finally {
        busy = false;
      }
    }
    window.setInterval(poll, 500);
  }
})();
