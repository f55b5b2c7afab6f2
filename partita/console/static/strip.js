// Live partition strips: polls /console/tables/{name}/partitions and /hot-keys (the introspection
// API's JSON, behind the console's sign-in) and redraws each strip and hot-key table with DOM calls; values go in as text only.
"use strict";
(function () {
  var maps = document.getElementById("maps");
  if (!maps) return;
  var table = maps.getAttribute("data-table");
  var base = "/console/tables/" + encodeURIComponent(table);

  function load(p) { return p.read_units_per_minute / 3000 + p.write_units_per_minute / 1000; }
  function fmt(n) { return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100); }

  function describe(p) {
    return "Partition " + p.number + ": " + p.item_count + " items, " + p.size_bytes + " bytes; " +
      fmt(p.read_units_per_minute) + " RCU and " + fmt(p.write_units_per_minute) +
      " WCU in the last minute; " + p.throttled_requests + " throttled";
  }

  function paint(cell, p, heat, peak) {
    cell.className = "partition" + (peak > 0 && heat >= 0.5 ? " hot" : "") + (p.throttled_requests > 0 ? " throttled" : "");
    cell.setAttribute("data-number", p.number);
    cell.setAttribute("data-heat", heat.toFixed(3));
    cell.setAttribute("data-items", p.item_count);
    cell.setAttribute("data-bytes", p.size_bytes);
    cell.setAttribute("data-throttles", p.throttled_requests);
    cell.style.width = (100 * (p.hash_end - p.hash_start + 1) / 18446744073709551616).toFixed(4) + "%";
    cell.style.background = "hsl(" + Math.round(210 - 210 * heat) + ", " + Math.round(40 + 50 * heat) + "%, " +
      Math.round(88 - 38 * heat) + "%)";
    cell.title = describe(p);
    cell.textContent = "";
    if (p.throttled_requests > 0) {
      var mark = document.createElement("span");
      mark.className = "mark";
      mark.textContent = "\u2715 " + p.throttled_requests;
      cell.appendChild(mark);
    }
  }

  function drawStrip(section, doc) {
    var strip = section.querySelector(".strip");
    var peak = 0;
    doc.partitions.forEach(function (p) { peak = Math.max(peak, load(p)); });
    while (strip.children.length > doc.partitions.length) strip.removeChild(strip.lastChild);
    doc.partitions.forEach(function (p, i) {
      var cell = strip.children[i];
      if (!cell) { cell = document.createElement("div"); strip.appendChild(cell); }
      paint(cell, p, peak > 0 ? load(p) / peak : 0, peak);
    });
    section.querySelector(".strip-legend .details").textContent = doc.partition_count + " partitions \u00b7 " +
      fmt(doc.read_units_per_second) + " RCU/s \u00b7 " + fmt(doc.write_units_per_second) + " WCU/s \u00b7 " +
      doc.throttled_requests + " throttled";
  }

  function drawHot(section, doc) {
    var body = section.querySelector(".hot-keys tbody");
    body.textContent = "";
    var keys = doc.keys.by_consumed_units;
    if (!keys.length) {
      var empty = body.insertRow();
      var cell = empty.insertCell();
      cell.colSpan = 5;
      cell.textContent = "No traffic in the last minute.";
      return;
    }
    keys.forEach(function (k) {
      var row = body.insertRow();
      var code = document.createElement("code");
      code.textContent = JSON.stringify(k.key);
      row.insertCell().appendChild(code);
      [k.read_units_per_minute, k.write_units_per_minute, k.throttles_per_minute,
       k.read_units_total + k.write_units_total].forEach(function (n) {
        var c = row.insertCell();
        c.className = "num";
        c.textContent = fmt(n);
      });
    });
  }

  function query(section) {
    var index = section.getAttribute("data-index");
    return index ? "?index=" + encodeURIComponent(index) : "";
  }

  function refresh() {
    var live = document.getElementById("live");
    if (live && !live.checked) return;
    var sections = maps.querySelectorAll("section.map");
    var pending = [];
    sections.forEach(function (section) {
      var q = query(section);
      pending.push(fetch(base + "/partitions" + q).then(function (r) { return r.ok ? r.json() : null; })
        .then(function (doc) { if (doc) drawStrip(section, doc); }));
      pending.push(fetch(base + "/hot-keys" + q).then(function (r) { return r.ok ? r.json() : null; })
        .then(function (doc) { if (doc) drawHot(section, doc); }));
    });
    Promise.all(pending).then(function () {
      maps.setAttribute("data-refreshed", String(Date.now()));
      var stamp = document.getElementById("refreshed");
      if (stamp) stamp.textContent = "refreshed " + new Date().toLocaleTimeString();
    }).catch(function () {});
  }

  maps.addEventListener("mouseover", function (event) {
    var cell = event.target.closest(".partition");
    if (!cell) return;
    cell.closest("section.map").querySelector(".hover-details").textContent = cell.title;
  });
  setInterval(refresh, 2000);
})();
