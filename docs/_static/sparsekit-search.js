// A search result quotes the text of its page, where each formula is still its TeX source
// (MathJax typesets it in the browser, not in the page's file): quote formulas as plain text.
(() => {
  const SYMBOLS = {
    times: "×", top: "ᵀ", cdot: "·", ldots: "…", cdots: "…", dots: "…", le: "≤", leq: "≤",
    ge: "≥", geq: "≥", ne: "≠", approx: "≈", sim: "∼", in: "∈", to: "→", infty: "∞",
    sum: "Σ", prod: "Π", ell: "ℓ", alpha: "α", beta: "β", gamma: "γ", delta: "δ",
    Delta: "Δ", epsilon: "ε", varepsilon: "ε", theta: "θ", lambda: "λ", mu: "μ", pi: "π",
    rho: "ρ", sigma: "σ", Sigma: "Σ", tau: "τ", phi: "φ", psi: "ψ", omega: "ω", Omega: "Ω",
    sqrt: "√", partial: "∂", nabla: "∇", mid: "|", lvert: "|", rvert: "|", Vert: "‖",
  };
  const plain = (tex) =>
    tex
      .replace(/^\s*\\[[(]|\\[\])]\s*$/g, "")
      .replace(/\\\|/g, "‖")
      .replace(/\\([A-Za-z]+)/g, (_, name) => SYMBOLS[name] ?? "")
      .replace(/\\[,;:! \\]/g, " ")
      .replace(/\\(.)/g, "$1")
      .replace(/[{}]/g, "")
      .replace(/\s+/g, " ")
      .trim();

  const patch = () => {
    if (typeof Search === "undefined" || Search.htmlToText.plainMath) return;
    const original = Search.htmlToText;
    Search.htmlToText = (html, anchor) => {
      const page = new DOMParser().parseFromString(html, "text/html");
      page.querySelectorAll(".math").forEach((m) => {
        m.textContent = ` ${plain(m.textContent)} `;
      });
      return original(page.documentElement.outerHTML, anchor);
    };
    Search.htmlToText.plainMath = true;
  };
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
