// Live stream records and TTL countdowns: re-fetches the server-rendered (escaped) section every
// 2 s and ticks the countdowns each second in between. Data never reaches the page as script.
"use strict";
(function () {
  var holder = document.getElementById("live-streams");
  if (!holder) return;
  // The wording of console/times.py's `relative` ("in 42 s", "in 59 min", "in 2 h 5 min", "in 3 days 4 h").
  function span(seconds) {
    var whole = Math.floor(seconds);
    if (whole < 60) return whole + " s";
    if (whole < 3600) return Math.floor(whole / 60) + " min";
    if (whole < 86400) {
      var h = Math.floor(whole / 3600), m = Math.floor(whole % 3600 / 60);
      return m ? h + " h " + m + " min" : h + " h";
    }
    var d = Math.floor(whole / 86400), hours = Math.floor(whole % 86400 / 3600);
    var text = d === 1 ? "1 day" : d + " days";
    return hours ? text + " " + hours + " h" : text;
  }
  function format(seconds) {
    if (seconds <= 0) return "due (deleted within the TTL delay)";
    return seconds < 1 ? "now" : "in " + span(seconds);
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
