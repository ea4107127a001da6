// gitvault view: filters the page's items by the words typed in the search box. The items and
// their text come from the page's JSON data block; nothing is fetched, nothing is written.
(function () {
  "use strict";
  var box = document.getElementById("gv-search");
  var count = document.getElementById("gv-count");
  var data = JSON.parse(document.getElementById("gv-data").textContent);
  var items = [];
  data.items.forEach(function (pair) {
    var node = document.getElementById(pair[0]);
    if (node !== null) { items.push({ node: node, text: pair[1] }); }
  });
  function apply() {
    var words = box.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
    var shown = 0;
    items.forEach(function (item) {
      var hit = words.every(function (w) { return item.text.indexOf(w) !== -1; });
      item.node.hidden = !hit;
      if (hit) { shown += 1; }
    });
    document.querySelectorAll(".gv-group").forEach(function (group) {
      var any = group.querySelector(".gv-item:not([hidden])") !== null;
      group.hidden = words.length > 0 && !any;
    });
    document.querySelectorAll(".gv-section").forEach(function (section) {
      var all = section.querySelectorAll(".gv-item");
      var visible = section.querySelectorAll(".gv-item:not([hidden])");
      section.classList.toggle("no-match", words.length > 0 && all.length > 0 && visible.length === 0);
    });
    count.textContent = words.length ? shown + " of " + items.length + " items match" : "";
  }
  box.hidden = false;
  box.addEventListener("input", apply);
  // Following a link to something the filter hides shows it again.
  window.addEventListener("hashchange", function () {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target !== null && target.hidden) { box.value = ""; apply(); target.scrollIntoView(); }
  });
})();
