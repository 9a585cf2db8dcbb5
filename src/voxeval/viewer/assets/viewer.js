// voxeval view: keyboard use of the unit table and audio <-> timeline linking.
// No framework and no network: every page works without this file too.
(function () {
  "use strict";

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(target.tagName));
  }

  // Unit table: "/" focuses the filters, j/k move a highlighted row, Enter opens it,
  // n/p follow the pager.
  var table = document.getElementById("units-table");
  var rows = table ? Array.prototype.slice.call(table.querySelectorAll("tbody tr")) : [];
  var current = -1;
  function highlight(i) {
    if (!rows.length) return;
    if (current >= 0) rows[current].classList.remove("kbd-current");
    current = Math.max(0, Math.min(rows.length - 1, i));
    rows[current].classList.add("kbd-current");
    var link = rows[current].querySelector("a");
    if (link) link.focus({ preventScroll: false });
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var go = function (id) { var a = document.getElementById(id); if (a) { window.location.href = a.href; } };
    if (event.key === "/") {
      var first = document.querySelector("#filters select, #filters input");
      if (first) { event.preventDefault(); first.focus(); }
    } else if (event.key === "j" && rows.length) { event.preventDefault(); highlight(current + 1); }
    else if (event.key === "k" && rows.length) { event.preventDefault(); highlight(current - 1); }
    else if (event.key === "n") { go("next-page"); go("next-unit"); }
    else if (event.key === "p") { go("prev-page"); go("prev-unit"); }
    else if (event.key === "u") { go("back-to-table"); }
  });

  // Filters apply as soon as a select changes (the Apply button stays for no-script use).
  var form = document.getElementById("filters");
  if (form) {
    Array.prototype.forEach.call(form.querySelectorAll("select"), function (select) {
      select.addEventListener("change", function () { form.submit(); });
    });
  }

  // Timeline figures: a playhead follows the track; a click seeks it.
  var figures = document.querySelectorAll(".figure svg.timeline");
  var firstAudio = document.querySelector("audio");
  Array.prototype.forEach.call(figures, function (svg) {
    var duration = parseFloat(svg.getAttribute("data-duration")) || 0;
    var audio = document.getElementById(svg.getAttribute("data-track")) || null;
    var playhead = svg.querySelector(".playhead");
    var width = svg.viewBox.baseVal.width;
    if (!audio || !duration) return;
    function place() {
      var x = Math.min(audio.currentTime / duration, 1) * width;
      playhead.setAttribute("x1", x); playhead.setAttribute("x2", x);
      playhead.setAttribute("visibility", audio.currentTime > 0 ? "visible" : "hidden");
    }
    audio.addEventListener("timeupdate", place);
    audio.addEventListener("seeked", place);
    svg.addEventListener("click", function (event) {
      var box = svg.getBoundingClientRect();
      audio.currentTime = Math.max(0, (event.clientX - box.left) / box.width) * duration;
      place();
    });
  });

  // Times in the speech and tool tables seek the timeline's track (or the first one).
  var timelineSvg = document.querySelector(".figure svg.timeline [class^=seg], .figure svg.timeline .tool");
  var timelineAudio = null;
  if (timelineSvg) {
    var owner = timelineSvg.closest("svg");
    timelineAudio = document.getElementById(owner.getAttribute("data-track")) || null;
  }
  Array.prototype.forEach.call(document.querySelectorAll("a.seek"), function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      var audio = timelineAudio || firstAudio;
      if (!audio) return;
      audio.currentTime = parseFloat(link.getAttribute("data-start")) || 0;
      audio.play();
    });
  });

  // Runs list: Compare is enabled once two runs are ticked; mixing suites is pointed out
  // here (the compare page refuses it too, with the reason).
  var compareForm = document.getElementById("compare-form");
  if (compareForm) {
    var button = document.getElementById("compare-button");
    var hint = document.getElementById("compare-hint");
    var boxes = compareForm.querySelectorAll("input[name=run]");
    var refresh = function () {
      var ticked = Array.prototype.filter.call(boxes, function (b) { return b.checked; });
      var suites = {};
      ticked.forEach(function (b) { suites[b.getAttribute("data-suite")] = true; });
      button.disabled = ticked.length < 2;
      if (ticked.length < 2) {
        hint.textContent = "Tick two or more runs of the same suite; the oldest of them is the baseline.";
      } else if (Object.keys(suites).length > 1) {
        hint.textContent = ticked.length + " runs ticked, of different suites: they cannot be compared.";
      } else {
        hint.textContent = ticked.length + " runs ticked.";
      }
    };
    Array.prototype.forEach.call(boxes, function (b) { b.addEventListener("change", refresh); });
    refresh();
  }
})();
