// Confirmation for destructive forms (delete table, delete item). No data is ever written as HTML.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
