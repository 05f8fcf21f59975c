// Sortable tables: a click on a header with class "sortable" sorts the rows by that column, using each cell's
// data-sort value when it has one (numbers sort as numbers; empty values last). Served from the package.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("table.sortable-table").forEach(function (table) {
    table.querySelectorAll("th.sortable").forEach(function (th, col) {
      var index = Array.prototype.indexOf.call(th.parentNode.children, th);
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var asc = th.getAttribute("data-dir") !== "asc";
        th.setAttribute("data-dir", asc ? "asc" : "desc");
        rows.sort(function (a, b) {
          var x = key(a.cells[index]), y = key(b.cells[index]);
          if (x === null) return 1;
          if (y === null) return -1;
          var r = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  function key(cell) {
    if (!cell) return null;
    var v = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (v === "" || v === "—") return null;
    var n = Number(v);
    return isNaN(n) ? v : n;
  }
});

// Keyboard shortcuts (the annotator pages): a key press clicks the element whose data-key names it (a choice
// button submits its form; ← → follow the previous / next links). Keys typed into a text field, with a modifier
// or while an input method composes are left alone; a form is sent once.
document.addEventListener("keydown", function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing || e.repeat) return;
  var t = e.target;  // typing into a field is not a choice; a ticked "raw text" switch keeps the keys working
  if (t && (t.isContentEditable || t.tagName === "TEXTAREA" || t.tagName === "SELECT" ||
            (t.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset)$/.test(t.type)))) return;
  var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  var target = null;
  document.querySelectorAll("[data-key]").forEach(function (el) {
    if (!target && el.getAttribute("data-key") === key) target = el;
  });
  if (!target) return;
  var form = target.form;
  if (form) {
    if (form.getAttribute("data-sent")) return;
    form.setAttribute("data-sent", "1");
  }
  e.preventDefault();
  target.click();
});

// A sample opened from a search (the sample browser's q and jq, carried in its URL): every match is marked, in
// the conversation (q) and in the outputs (jq). Text nodes are split, never parsed as HTML.
document.addEventListener("DOMContentLoaded", function () {
  if (!document.getElementById("sample-nav")) return;
  var params = new URLSearchParams(window.location.search);
  mark(document.querySelectorAll(".turn .text"), params.get("q"));
  mark(document.querySelectorAll(".plain"), params.get("jq"));
  function mark(roots, needle) {
    needle = (needle || "").trim().toLowerCase();
    if (!needle) return;
    roots.forEach(function (root) {
      var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      var nodes = [];
      while (walker.nextNode()) nodes.push(walker.currentNode);
      nodes.forEach(function (node) {
        var text = node.nodeValue, lower = text.toLowerCase();
        if (lower.length !== text.length) lower = text;  // a case mapping that changes lengths: match as written
        var at = lower.indexOf(needle);
        if (at < 0) return;
        var frag = document.createDocumentFragment(), from = 0;
        while (at >= 0) {
          frag.appendChild(document.createTextNode(text.slice(from, at)));
          var m = document.createElement("mark");
          m.textContent = text.slice(at, at + needle.length);
          frag.appendChild(m);
          from = at + needle.length;
          at = lower.indexOf(needle, from);
        }
        frag.appendChild(document.createTextNode(text.slice(from)));
        node.parentNode.replaceChild(frag, node);
      });
    });
  }
});
