// The console's one script: a page whose <main> has data-live="N" is fetched again every
// N seconds and its <main> replaced, while the tab is visible. Every page works without it.
"use strict";
(function () {
  const main = document.querySelector("main[data-live]");
  if (!main) {
    return;
  }
  const seconds = Number(main.dataset.live) || 5;
  async function refresh() {
    if (document.visibilityState !== "visible") {
      return;
    }
    const answer = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
    if (!answer.ok) {
      return;
    }
    const fresh = new DOMParser().parseFromString(await answer.text(), "text/html").querySelector("main");
    if (fresh) {
      main.replaceChildren(...fresh.childNodes);
    }
  }
  setInterval(() => { refresh().catch(() => {}); }, seconds * 1000);
})();
