/* attnscope explore: draws the page from the data embedded in it. No network, no library.
   Data layout (see attnscope/results/explore.py): for each (layer, head), one block of
   bytes holding the row of each stored query position p over keys 0..p; byte k = k / levels. */
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var D = JSON.parse(document.getElementById("attnscope-data").textContent);
  var M = D.messages;
  var L = D.layers, H = D.heads, T = D.tokens.length;
  var W = null;
  var off = {}, block = 0;
  D.positions.forEach(function (p) { off[p] = block; block += p + 1; });
  var S = {
    lang: D.lang, q: D.query, by: "word", sink: true, layer: "weight",
    sel: { kind: "all", layer: 0, head: 0 }, key: D.key.slice()
  };
  var STOPS = [[0, 247, 251, 255], [0.125, 222, 235, 247], [0.25, 198, 219, 239], [0.375, 158, 202, 225],
    [0.5, 107, 174, 214], [0.625, 66, 146, 198], [0.75, 33, 113, 181], [0.875, 8, 81, 156], [1, 8, 48, 107]];
  var LUT = [];
  (function () {
    for (var i = 0; i < 256; i++) {
      var f = i / 255, k = 1;
      while (k < STOPS.length - 1 && f > STOPS[k][0]) k++;
      var a = STOPS[k - 1], b = STOPS[k], u = (f - a[0]) / (b[0] - a[0]);
      LUT.push([0, 1, 2].map(function (c) { return Math.round(a[c + 1] + (b[c + 1] - a[c + 1]) * u); }));
    }
  })();
  function heat(f) {
    var c = LUT[Math.max(0, Math.min(255, Math.round(f * 255)))];
    return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
  }
  /* Korean particles, as render/i18n.py chooses them: {name:/이} after the value, {name:q/이}
     after the value in quotes (“그것을”이); the same rules, read from the last readable character. */
  var PAIRS = { "은": "은는", "는": "은는", "이": "이가", "가": "이가", "을": "을를", "를": "을를",
    "과": "과와", "와": "과와", "이다": ["이다", "다"], "다": ["이다", "다"], "이라": ["이라", "라"], "이나": ["이나", "나"] };
  var DIGIT_FINAL = "0136780";
  function latinFinal(w) {
    var s = w.toLowerCase(), n = s.length, c = s[n - 1], V = "aeiou";
    if (w === w.toUpperCase() || !/[aeiouy]/.test(s)) return [/[lmnr]/.test(c), /[lr]/.test(c)];
    if (/ng$/.test(s) || c === "m" || c === "n") return [true, false];
    if (c === "l") return [true, true];
    if (c === "e" && n > 2 && "lmn".indexOf(s[n - 2]) >= 0 && "aeiouy".indexOf(s[n - 3]) >= 0) return [true, s[n - 2] === "l"];
    if ("kpt".indexOf(c) >= 0 && n > 1 && V.indexOf(s[n - 2]) >= 0 && (n < 3 || V.indexOf(s[n - 3]) < 0)) return [true, false];
    return [false, false];
  }
  function hasFinal(word) {
    var s = word.trim();
    for (var i = s.length - 1; i >= 0; i--) {
      var ch = s[i], code = ch.charCodeAt(0);
      if (code >= 0xac00 && code <= 0xd7a3) { var f = (code - 0xac00) % 28; return [f !== 0, f === 8]; }
      if (ch >= "0" && ch <= "9") return [DIGIT_FINAL.indexOf(ch) >= 0, "178".indexOf(ch) >= 0];
      if (ch === "%") return [false, false];
      if (/[A-Za-z]/.test(ch)) {
        var start = i;
        while (start > 0 && /[A-Za-z]/.test(s[start - 1])) start--;
        if (start === i) return ["lmnLMNrR".indexOf(ch) >= 0, "lLrR".indexOf(ch) >= 0];
        return latinFinal(s.slice(start, i + 1));
      }
      if (/[\p{L}\p{N}]/u.test(ch)) return [false, false];
    }
    return [false, false];
  }
  function particle(word, which) {
    var final = hasFinal(word);
    if (which === "으로" || which === "로") return word + (!final[0] || final[1] ? "로" : "으로");
    var pair = PAIRS[which];
    return word + (final[0] ? pair[0] : pair[1]);
  }
  function t(key, v) {
    var s = (M[S.lang] && M[S.lang][key]) || M.en[key] || key;
    return s.replace(/\{(\w+)(?::(q?)(?:\/([^{}]+))?)?\}/g, function (all, k, q, which) {
      if (!(v && k in v)) return all;
      var text = q ? "\u201c" + v[k] + "\u201d" : String(v[k]);
      return which ? particle(text, which) : text;
    });
  }
  function el(tag, attrs, text) {
    var e = tag.indexOf("svg:") === 0 ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function $(id) { return document.getElementById(id); }
  function f2(x) { return x.toFixed(2); }

  /* measured text width, for the SVG layouts (a hidden SVG text element) */
  var meter = null, widths = {};
  function textWidth(s, size) {
    var k = size + "|" + s;
    if (k in widths) return widths[k];
    if (!meter) {
      var svg = el("svg:svg", { width: 0, height: 0, style: "position:absolute;left:-9999px" });
      meter = el("svg:text", {});
      svg.appendChild(meter); document.body.appendChild(svg);
    }
    meter.setAttribute("font-size", size);
    meter.textContent = s;
    widths[k] = meter.getComputedTextLength();
    return widths[k];
  }

  /* rows */
  function stored(p) { return off.hasOwnProperty(p); }
  function rowOf(l, h, p) {
    var base = (l * H + h) * block + off[p], r = new Float64Array(p + 1), s = 0;
    for (var j = 0; j <= p; j++) r[j] = W[base + j] / D.levels;
    if (!S.sink) {
      r[0] = 0;
      for (j = 1; j <= p; j++) s += r[j];
      for (j = 1; j <= p; j++) r[j] = s > 0 ? r[j] / s : 0;
    }
    return r;
  }
  function selected() {
    var out = [];
    for (var l = 0; l < L; l++) for (var h = 0; h < H; h++) {
      if (S.sel.kind === "all" || (S.sel.layer === l && (S.sel.kind === "layer" || S.sel.head === h))) out.push([l, h]);
    }
    return out;
  }
  function selRow(p) {
    var heads = selected(), acc = new Float64Array(p + 1);
    heads.forEach(function (lh) {
      var r = rowOf(lh[0], lh[1], p);
      for (var j = 0; j <= p; j++) acc[j] += r[j];
    });
    for (var j = 0; j <= p; j++) acc[j] /= heads.length;
    return acc;
  }
  function groups(p) {
    if (S.by === "token") {
      var g = [];
      for (var i = 0; i <= p; i++) g.push({ label: D.tokens[i].label, members: [i] });
      return g;
    }
    var out = [];
    D.words.forEach(function (w) {
      var m = w.tokens.filter(function (i) { return i <= p; });
      if (m.length) out.push({ label: w.text + (m.length < w.tokens.length ? " " + t("figures.to_query") : ""), members: m });
    });
    return out;
  }
  /* largest remainder: the shown numbers (in hundredths) add up to the shown sum */
  function apportion(values) {
    var total = Math.round(values.reduce(function (a, b) { return a + b; }, 0) * 100);
    var units = values.map(function (v) { return Math.floor(v * 100 + 1e-9); });
    var short = total - units.reduce(function (a, b) { return a + b; }, 0);
    var order = values.map(function (v, i) { return i; }).sort(function (a, b) {
      return (values[b] * 100 - units[b]) - (values[a] * 100 - units[a]) || a - b;
    });
    for (var k = 0; k < short && k < order.length; k++) units[order[k]] += 1;
    return { units: units, total: total };
  }
  function sumOver(r, members) {
    var s = 0;
    members.forEach(function (i) { if (i < r.length) s += r[i]; });
    return s;
  }
  function selName() {
    if (S.sel.kind === "all") return t("explore.sel.all", { layers: L, heads: H });
    if (S.sel.kind === "layer") return t("explore.sel.layer", { layer: S.sel.layer, heads: H });
    return t("figures.selection.one", { layer: S.sel.layer, head: S.sel.head, kv: Math.floor(S.sel.head / (H / D.kv_heads)) });
  }
  function keyLabel() {
    var k = S.key;
    if (!k.length) return "";
    if (S.by === "word") {
      var w = D.words[D.tokens[k[0]].word];
      if (w.tokens.every(function (i) { return k.indexOf(i) >= 0; })) return w.text;
    }
    return k.map(function (i) { return D.tokens[i].label; }).join("");
  }
  function defaultKey(p) {
    var r = selRow(p), g = groups(p), best = null, bv = -1;
    g.forEach(function (x) {
      if (x.members.indexOf(p) >= 0 || x.members.indexOf(0) >= 0) return;
      var v = sumOver(r, x.members);
      if (v > bv) { bv = v; best = x.members; }
    });
    return best || [0];
  }
  function fixKey() {
    S.key = S.key.filter(function (i) { return i <= S.q; });
    if (!S.key.length) S.key = defaultKey(S.q);
  }

  /* the prompt's tokens */
  function drawTokens() {
    var box = $("tokens"), r = selRow(S.q);
    box.textContent = "";
    var top = 0;
    for (var j = 1; j <= S.q; j++) top = Math.max(top, r[j]);
    D.tokens.forEach(function (tok, i) {
      var b = el("button", { "class": "tok", "data-pos": i, type: "button", title: "#" + i + " " + tok.label }, tok.label);
      if (tok.special) b.classList.add("special");
      if (i > S.q) b.classList.add("after");
      else if (r[i] > 0 && top > 0) {
        var f = Math.min(1, r[i] / top);
        b.style.background = heat(f * 0.85);
        if (f > 0.6) b.style.color = "#fff";
      }
      if (i === S.q) b.classList.add("query");
      if (S.key.indexOf(i) >= 0) b.classList.add("key");
      if (!stored(i)) { b.classList.add("nostore"); b.title += " (" + t("explore.not_stored") + ")"; }
      b.addEventListener("click", function () { setQuery(i); });
      box.appendChild(b);
    });
  }

  /* the note's chart */
  function drawChart() {
    var p = S.q, r = selRow(p), g = groups(p), size = 13, rowH = 21;
    var svg = $("chart");
    svg.textContent = "";
    var labels = g.map(function (x) { return x.label; }).concat([t("common.sum")]);
    var lw = Math.max.apply(null, labels.map(function (s) { return textWidth(s, size); })) + 12;
    var numW = textWidth("0.00", size), vx = 4 + lw + numW, bx = vx + 10, barPx = 240, y = 4, total = 0;
    var markW = Math.max(textWidth(t("figures.self"), size), textWidth(t("figures.sink_excluded"), size));
    var vals = g.map(function (x) { return sumOver(r, x.members); }), shown = apportion(vals);
    g.forEach(function (x, gi) {
      var v = vals[gi], isQ = x.members.indexOf(p) >= 0;
      var excluded = !S.sink && x.members.length === 1 && x.members[0] === 0;
      total += v;
      y += rowH;
      var row = el("svg:g", { "class": "bar click", "data-index": gi, "data-value": v, "data-members": x.members.join(",") });
      row.appendChild(el("svg:rect", { x: 0, y: y - rowH + 5, width: bx + barPx, height: rowH, fill: "transparent" }));
      if (x.members.join() === S.key.join()) {
        row.appendChild(el("svg:rect", { x: 0, y: y - rowH + 5, width: bx + barPx, height: rowH, fill: "#dafbe1" }));
      }
      row.appendChild(el("svg:text", { x: 4, y: y, "font-size": size, "font-weight": isQ ? "bold" : "normal" }, x.label));
      row.appendChild(el("svg:text", { x: vx, y: y, "font-size": size, "text-anchor": "end", "class": "value" }, excluded ? "-" : (shown.units[gi] / 100).toFixed(2)));
      var w = Math.max(0, Math.min(1, v)) * barPx;
      if (w > 0) row.appendChild(el("svg:rect", { x: bx, y: y - 11, width: w, height: 12, fill: "#3b6fb6" }));
      var mark = isQ ? t("figures.self") : excluded ? t("figures.sink_excluded") : "";
      if (mark) row.appendChild(el("svg:text", { x: bx + w + 8, y: y, "font-size": size, fill: "#59636e" }, mark));
      row.appendChild(el("svg:title", {}, x.label + ": " + v.toFixed(4)));
      row.addEventListener("click", function () { S.key = x.members.slice(); draw(); });
      svg.appendChild(row);
    });
    y += 10;
    svg.appendChild(el("svg:line", { x1: vx - numW - 4, y1: y, x2: vx, y2: y, stroke: "#59636e" }));
    y += rowH;
    svg.appendChild(el("svg:text", { x: 4, y: y, "font-size": size }, t("common.sum")));
    svg.appendChild(el("svg:text", { x: vx, y: y, "font-size": size, "text-anchor": "end", id: "chart-sum", "data-value": total }, (shown.total / 100).toFixed(2)));
    svg.setAttribute("width", Math.ceil(bx + barPx + markW + 20));
    svg.setAttribute("height", y + 8);
    $("chart-title").textContent = t("figures.weights.title", { query: D.tokens[p].label }) + ": " + t("figures.query", { query: D.tokens[p].label, pos: p });
    $("chart-sel").textContent = selName();
    var notes = [];
    if (S.by === "word") notes.push(t("figures.by_word"));
    if (!S.sink) notes.push(p > 0 ? t("figures.no_sink", { q: p }) : t("explore.sink_first"));
    $("chart-notes").textContent = notes.join(" ");
  }

  /* the layers x heads grid of each head's weight on the key */
  function drawGrid() {
    var svg = $("grid"), cw = 26, ch = 18, size = 11, p = S.q;
    svg.textContent = "";
    var layerWord = t("figures.layer"), headWord = t("figures.head");
    var left = Math.max(textWidth(layerWord, size), textWidth("00", size)) + 10;
    var top = 40, vals = [], mx = 0, effect = S.layer === "effect" && D.effects;
    for (var l = 0; l < L; l++) {
      vals.push([]);
      for (var h = 0; h < H; h++) {
        var v = effect ? D.effects[l][h] : sumOver(rowOf(l, h, p), S.key);
        vals[l].push(v);
        mx = Math.max(mx, effect ? -v : v);
      }
    }
    var scale = mx > 0 ? mx : 1;
    svg.appendChild(el("svg:text", { x: left + H * cw / 2, y: 14, "font-size": size, "text-anchor": "middle", fill: "#59636e" }, headWord));
    svg.appendChild(el("svg:text", { x: left - 6, y: top - 6, "font-size": size, "text-anchor": "end", fill: "#59636e" }, layerWord));
    for (var h2 = 0; h2 < H; h2++) {
      svg.appendChild(el("svg:text", { x: left + h2 * cw + cw / 2, y: top - 6, "font-size": size, "text-anchor": "middle", fill: "#59636e" }, String(h2)));
    }
    var groupSize = H / D.kv_heads;
    for (l = 0; l < L; l++) {
      var lab = el("svg:text", { x: left - 6, y: top + l * ch + ch - 5, "font-size": size, "text-anchor": "end", "class": "click layer-label", "data-layer": l,
        fill: S.sel.kind === "layer" && S.sel.layer === l ? "#cf222e" : "#59636e", "font-weight": S.sel.kind === "layer" && S.sel.layer === l ? "bold" : "normal" }, String(l));
      (function (layer) { lab.addEventListener("click", function () { S.sel = { kind: "layer", layer: layer, head: 0 }; draw(); }); })(l);
      svg.appendChild(lab);
      for (h = 0; h < H; h++) {
        var shown = effect ? -vals[l][h] : vals[l][h];
        var fill = effect && shown < -0.05 * scale ? "#7fbf7f" : heat(Math.max(0, shown) / scale);
        var c = el("svg:rect", { x: left + h * cw, y: top + l * ch, width: cw - 1, height: ch - 1, fill: fill,
          "class": "click cell", "data-layer": l, "data-head": h, "data-value": vals[l][h] });
        c.appendChild(el("svg:title", {}, t("figures.cell_head", { layer: l, head: h, kv: Math.floor(h / groupSize) }) + ": " + vals[l][h].toFixed(3)));
        (function (layer, head) { c.addEventListener("click", function () { S.sel = { kind: "head", layer: layer, head: head }; draw(); }); })(l, h);
        svg.appendChild(c);
      }
    }
    for (h = 1; h < H; h++) {
      if (h % groupSize === 0) svg.appendChild(el("svg:line", { x1: left + h * cw - 0.5, y1: top - 2, x2: left + h * cw - 0.5, y2: top + L * ch + 2, stroke: "#1f2328", "stroke-width": 1.5 }));
    }
    if (S.sel.kind !== "all") {
      var sx = left + (S.sel.kind === "head" ? S.sel.head * cw : 0), sw = S.sel.kind === "head" ? cw - 1 : H * cw - 1;
      svg.appendChild(el("svg:rect", { x: sx - 1, y: top + S.sel.layer * ch - 1, width: sw + 2, height: ch + 1, fill: "none", stroke: "#cf222e", "stroke-width": 2 }));
    }
    var y = top + L * ch + 14;
    for (var i = 0; i < 5; i++) {
      svg.appendChild(el("svg:rect", { x: left + i * 34, y: y, width: 34, height: 10, fill: heat(i / 4), stroke: "#d0d7de", "stroke-width": 0.5 }));
      svg.appendChild(el("svg:text", { x: left + i * 34 + 17, y: y + 26, "font-size": 10, "text-anchor": "middle" }, f2(scale * i / 4)));
    }
    svg.appendChild(el("svg:text", { x: left + 5 * 34 + 10, y: y + 10, "font-size": 11, fill: "#59636e" }, t("figures.scale", { top: f2(scale) })));
    svg.setAttribute("width", Math.max(left + H * cw + 8, left + 5 * 34 + 20 + textWidth(t("figures.scale", { top: f2(scale) }), 11)));
    svg.setAttribute("height", y + 34);
    $("grid-title").textContent = effect ? t("explore.grid.effect_title", { metric: D.metric })
      : t("explore.grid.title", { query: D.tokens[p].label, key: keyLabel() });
    if (effect) {
      svg.appendChild(el("svg:text", { x: left, y: y + 48, "font-size": 11, fill: "#59636e" }, t("explore.grid.effect_note")));
      svg.setAttribute("height", y + 56);
      svg.setAttribute("width", Math.max(Number(svg.getAttribute("width")), left + textWidth(t("explore.grid.effect_note"), 11) + 8));
    }
  }

  /* one selection's whole causal matrix */
  function drawMatrix() {
    var sec = $("matrix-section");
    if (!D.full) { sec.hidden = true; return; }
    sec.hidden = false;
    var cell = Math.max(2, Math.min(18, Math.floor(640 / T))), n = T;
    var heads = selected(), m = new Float32Array(n * n), i, j;
    heads.forEach(function (lh) {
      var base = (lh[0] * H + lh[1]) * block;
      for (i = 0; i < n; i++) {
        var rb = base + off[i], s = 0;
        if (!S.sink) { for (j = 1; j <= i; j++) s += W[rb + j]; }
        for (j = 0; j <= i; j++) {
          var v = W[rb + j] / D.levels;
          if (!S.sink) v = j === 0 || s === 0 ? 0 : W[rb + j] / s;
          m[i * n + j] += v / heads.length;
        }
      }
    });
    var top = 0;
    for (i = n > 1 ? n : 0; i < n * n; i++) top = Math.max(top, m[i]);
    if (top <= 0) top = 1;
    var cv = $("matrix-canvas");
    cv.width = n; cv.height = n;
    cv.style.width = (n * cell) + "px"; cv.style.height = (n * cell) + "px";
    var ctx = cv.getContext("2d"), img = ctx.createImageData(n, n);
    for (i = 0; i < n; i++) for (j = 0; j < n; j++) {
      var c = j > i ? [236, 239, 242] : LUT[Math.round(Math.min(1, m[i * n + j] / top) * 255)], o = (i * n + j) * 4;
      img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2]; img.data[o + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    cv.onclick = function (ev) {
      var r = cv.getBoundingClientRect(), row = Math.floor((ev.clientY - r.top) / cell);
      if (row >= 0 && row < n) setQuery(row);
    };
    cv.onmousemove = function (ev) {
      var r = cv.getBoundingClientRect(), row = Math.floor((ev.clientY - r.top) / cell), col = Math.floor((ev.clientX - r.left) / cell);
      if (row >= 0 && row < n && col >= 0 && col <= row) cv.title = row + " " + D.tokens[row].label + " → " + col + " " + D.tokens[col].label + ": " + m[row * n + col].toFixed(3);
      else cv.title = "";
    };
    var size = 11, every = Math.max(1, Math.ceil(17 / cell)), labs = [];
    for (i = 0; i < n; i += every) labs.push(i);
    var text = function (k) { var s = k + " " + D.tokens[k].label; return s.length > 14 ? s.slice(0, 13) + "…" : s; };
    var lw = Math.max.apply(null, labs.map(function (k) { return textWidth(text(k), size); })) + 8;
    var rows = $("matrix-rows"), cols = $("matrix-cols");
    rows.textContent = ""; cols.textContent = "";
    rows.setAttribute("width", lw); rows.setAttribute("height", n * cell);
    cols.setAttribute("width", n * cell); cols.setAttribute("height", lw);
    labs.forEach(function (k) {
      rows.appendChild(el("svg:text", { x: lw - 4, y: k * cell + cell / 2 + 4, "font-size": size, "text-anchor": "end",
        fill: k === S.q ? "#cf222e" : "#1f2328" }, text(k)));
      var x = k * cell + cell / 2 + 4;
      cols.appendChild(el("svg:text", { x: x, y: lw - 4, "font-size": size, transform: "rotate(-90 " + x + " " + (lw - 4) + ")" }, text(k)));
    });
    $("matrix-corner").style.width = lw + "px";
    $("matrix-title").textContent = t("explore.matrix.title", { sel: selName() });
    $("matrix-scale").textContent = t("figures.scale", { top: f2(top) }) + " · " + t("figures.matrix.masked");
  }

  function drawStatic() {
    document.documentElement.lang = S.lang;
    document.querySelectorAll("[data-msg]").forEach(function (e) { e.textContent = t(e.getAttribute("data-msg")); });
    $("model").textContent = t("figures.model", { model: D.model, layers: L, heads: H, kv: D.kv_heads });
    $("quant").textContent = t("explore.quant", { levels: D.levels, err: (1 / D.levels).toFixed(4) });
    var part = $("partial");
    if (D.full) part.hidden = true;
    else {
      part.hidden = false;
      part.textContent = t("explore.partial", { n: T, limit: D.limit, positions: D.positions.join(", ") });
    }
    document.querySelectorAll(".langs button").forEach(function (b) { b.setAttribute("aria-pressed", String(b.value === S.lang)); });
    document.querySelectorAll("button[data-by]").forEach(function (b) { b.setAttribute("aria-pressed", String(b.getAttribute("data-by") === S.by)); });
    $("sel-all").setAttribute("aria-pressed", String(S.sel.kind === "all"));
    $("grid-layers").hidden = !D.effects;
    document.querySelectorAll("button[data-layer]").forEach(function (b) { b.setAttribute("aria-pressed", String(b.getAttribute("data-layer") === S.layer)); });
    $("sink").checked = S.sink;
  }
  function draw() {
    fixKey();
    drawStatic();
    drawTokens();
    drawChart();
    drawGrid();
    drawMatrix();
  }
  function setQuery(p) {
    if (!stored(p)) { $("status").textContent = t("explore.not_stored") + ": " + p; return; }
    $("status").textContent = "";
    S.q = p;
    draw();
  }

  function decode(b64) {
    var bin = atob(b64.replace(/-/g, "+").replace(/_/g, "/")), u8 = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
    var ds = new DecompressionStream("deflate");
    return new Response(new Blob([u8]).stream().pipeThrough(ds)).arrayBuffer();
  }
  function wire() {
    document.querySelectorAll(".langs button").forEach(function (b) { b.addEventListener("click", function () { S.lang = b.value; draw(); }); });
    document.querySelectorAll("button[data-by]").forEach(function (b) { b.addEventListener("click", function () { S.by = b.getAttribute("data-by"); S.key = []; draw(); }); });
    document.querySelectorAll("button[data-layer]").forEach(function (b) { b.addEventListener("click", function () { S.layer = b.getAttribute("data-layer"); draw(); }); });
    $("sink").addEventListener("change", function () { S.sink = $("sink").checked; draw(); });
    $("sel-all").addEventListener("click", function () { S.sel = { kind: "all", layer: 0, head: 0 }; draw(); });
  }
  var t0 = performance.now();
  decode(D.data).then(function (buf) {
    W = new Uint8Array(buf);
    wire();
    draw();
    window.attnscope = { ready: true, state: S, openMs: performance.now() - t0, draw: draw, setQuery: setQuery };
    document.body.setAttribute("data-ready", "1");
  }).catch(function (e) {
    $("status").textContent = String(e);
    throw e;
  });
})();
