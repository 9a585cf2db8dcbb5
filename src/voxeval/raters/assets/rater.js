/* voxeval rater pages: log-in links, the listening gate, keyboard shortcuts, recording.
   The server enforces every rule itself; this script only keeps the page in step. */
(function () {
  "use strict";

  // A /login?token= link: take the token out of the address bar, then post it.
  var login = document.getElementById("login-form");
  if (login && login.dataset.autosubmit) {
    if (window.history && history.replaceState) history.replaceState(null, "", "/login");
    login.submit();
    return;
  }

  var form = document.getElementById("answer-form");
  if (!form) return;
  var assignment = parseInt(form.dataset.assignment, 10);
  var csrf = form.dataset.csrf;
  var deadline = performance.now() + parseFloat(form.dataset.secondsLeft || "0") * 1000;
  var audios = Array.prototype.slice.call(document.querySelectorAll("audio[data-clip]"));
  var gated = Array.prototype.slice.call(form.querySelectorAll("[data-gated]"));
  var status = document.getElementById("gate-status");
  var confirmed = {}; // clip number -> the server counts it as played
  // A reload (or going back) starts from what the server already counted.
  audios.forEach(function (a) { if (a.dataset.played === "1") confirmed[a.dataset.clip] = true; });
  var haveRecording = form.dataset.task !== "record";
  var submitting = false;
  var wasClosed = false; // the gate was closed at some point on this page

  function report(audio, event) {
    return fetch("/api/playback", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({
        assignment: assignment,
        clip: parseInt(audio.dataset.clip, 10),
        event: event,
        media_time: isFinite(audio.currentTime) ? audio.currentTime : null
      })
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) throw new Error(data.error || ("HTTP " + response.status));
        return data;
      });
    });
  }

  function setClipState(audio, text) {
    var el = document.getElementById("clip-state-" + audio.dataset.clip);
    if (el) el.textContent = text;
  }

  function update() {
    var left = audios.filter(function (a) { return !confirmed[a.dataset.clip]; });
    var wait = Math.max(0, Math.ceil((deadline - performance.now()) / 1000));
    var ready = left.length === 0 && wait === 0 && haveRecording;
    gated.forEach(function (el) { el.disabled = !ready; });
    var text;
    if (left.length) text = "Play every clip to the end before answering (" + left.length + " left).";
    else if (wait > 0) text = "Please keep listening: you can answer in " + wait + " s.";
    else if (!haveRecording) text = "Record the text (or choose a file), then submit.";
    else text = "You can answer now.";
    if (status && status.textContent !== text) status.textContent = text;
    if (status) status.className = "gate " + (ready ? "ok" : "muted");
    // A refusal shown while the gate was closed (e.g. "play every clip ...") is stale once
    // it opens; an error shown with the gate already open (a bad field) stays.
    var serverError = document.getElementById("server-error");
    if (ready && wasClosed && serverError) serverError.remove();
    if (!ready) wasClosed = true;
    return ready;
  }

  audios.forEach(function (audio) {
    audio.addEventListener("play", function () {
      setClipState(audio, "playing");
      report(audio, "play").catch(function () {});
    });
    // The server times each stretch of playing between "play" and "pause"/"ended": a clip
    // counts only when it has been heard for about its length, not skipped to its end.
    audio.addEventListener("pause", function () {
      if (!audio.ended) report(audio, "pause").catch(function () {});
    });
    audio.addEventListener("ended", function () {
      setClipState(audio, "checking…");
      report(audio, "ended").then(function (data) {
        (data.played || []).forEach(function (n) { confirmed[String(n)] = true; });
        if (confirmed[audio.dataset.clip]) setClipState(audio, "played ✓");
        else setClipState(audio, "not counted: listen to the whole clip without skipping; play it again");
        update();
      }).catch(function (err) {
        setClipState(audio, "not counted (" + err.message + "); play it again");
      });
    });
  });

  // The typed reason survives a reload or a trip back to this page (per tab).
  var reason = document.getElementById("reason");
  var reasonKey = "voxeval-reason-" + assignment;
  if (reason && window.sessionStorage) {
    try {
      var kept = sessionStorage.getItem(reasonKey);
      if (kept && !reason.value) reason.value = kept;
      reason.addEventListener("input", function () { sessionStorage.setItem(reasonKey, reason.value); });
    } catch (e) { /* storage switched off: nothing to keep */ }
  }

  form.addEventListener("submit", function (event) {
    if (submitting || !update()) { event.preventDefault(); return; }
    submitting = true; // one answer per page: ignore double clicks
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var tag = target && target.tagName;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (tag === "TEXTAREA" || (tag === "INPUT" && target.type !== "radio" && target.type !== "checkbox")) return;
    var shortcut = form.querySelector('[data-key="' + event.key + '"]');
    if (shortcut) {
      event.preventDefault();
      if (!shortcut.disabled) shortcut.click();
      return;
    }
    if (event.key === " " && tag !== "BUTTON" && tag !== "AUDIO" && tag !== "A") {
      var next = audios.filter(function (a) { return !confirmed[a.dataset.clip]; })[0] || audios[0];
      if (!next) return;
      event.preventDefault();
      if (next.paused) next.play(); else next.pause();
    }
  });

  // Record task: MediaRecorder into the form's file field, so the ordinary form post
  // carries the take (and a chosen file works the same way without a microphone).
  var toggle = document.getElementById("record-toggle");
  var fileInput = document.getElementById("recording");
  if (fileInput) {
    fileInput.addEventListener("change", function () {
      haveRecording = fileInput.files.length > 0;
      update();
    });
  }
  if (toggle && fileInput) {
    var recStatus = document.getElementById("record-status");
    var take = document.getElementById("take");
    var recorder = null;
    var started = 0;
    if (!window.MediaRecorder || !navigator.mediaDevices) {
      toggle.disabled = true;
      recStatus.textContent = "This browser cannot record; choose an audio file instead.";
    }
    toggle.addEventListener("click", function () {
      if (recorder && recorder.state === "recording") { recorder.stop(); return; }
      navigator.mediaDevices.getUserMedia({ audio: true }).then(function (stream) {
        var types = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/webm"];
        var type = types.filter(function (t) { return MediaRecorder.isTypeSupported(t); })[0];
        var chunks = [];
        recorder = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
        recorder.addEventListener("dataavailable", function (e) { if (e.data.size) chunks.push(e.data); });
        recorder.addEventListener("stop", function () {
          stream.getTracks().forEach(function (t) { t.stop(); });
          var blob = new Blob(chunks, { type: recorder.mimeType || "audio/webm" });
          var ext = blob.type.indexOf("ogg") >= 0 ? "ogg" : "webm";
          var transfer = new DataTransfer();
          transfer.items.add(new File([blob], "recording." + ext, { type: blob.type }));
          fileInput.files = transfer.files;
          take.src = URL.createObjectURL(blob);
          take.hidden = false;
          toggle.textContent = "Record again";
          recStatus.textContent = "Recorded " + ((performance.now() - started) / 1000).toFixed(1) +
            " s. Listen to it, then submit or record again.";
          haveRecording = true;
          update();
        });
        started = performance.now();
        recorder.start(250);
        toggle.textContent = "Stop";
        recStatus.textContent = "Recording…";
      }).catch(function (err) {
        recStatus.textContent = "Microphone unavailable (" + err.message + "); choose a file instead.";
      });
    });
  }

  setInterval(update, 500);
  update();
})();
