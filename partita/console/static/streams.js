// Live stream records and TTL countdowns: re-fetches the server-rendered (escaped) section every
// 2 s and ticks the countdowns each second in between. Data never reaches the page as script.
"use strict";
(function () {
  var holder = document.getElementById("live-streams");
  if (!holder) return;
  function format(seconds) {
    if (seconds <= 0) return "due (deleted within the TTL delay)";
    var d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600),
        m = Math.floor(seconds % 3600 / 60), s = Math.floor(seconds % 60);
    return (d ? d + "d " : "") + (d || h ? h + "h " : "") + (d || h || m ? m + "m " : "") + s + " s";
  }
  function tick() {
    holder.querySelectorAll("tr.expiry").forEach(function (row) {
      var left = Number(row.getAttribute("data-remaining")) - 1;
      row.setAttribute("data-remaining", String(left));
      row.querySelector(".countdown").textContent = format(left);
    });
  }
  function refresh() {
    var live = document.getElementById("live");
    if (live && !live.checked) return;
    var url = window.location.pathname + "?fragment=1";
    fetch(url).then(function (r) { return r.ok ? r.text() : null; }).then(function (text) {
      if (text === null) return;
      var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("streams-section");
      var current = document.getElementById("streams-section");
      if (fresh && current) current.replaceWith(document.importNode(fresh, true));
      holder.setAttribute("data-refreshed", String(Date.now()));
    }).catch(function () {});
  }
  setInterval(tick, 1000);
  setInterval(refresh, 2000);
})();
