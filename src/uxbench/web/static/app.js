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
