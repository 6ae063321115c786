"""Independent references for ``ablate``, ``knockout`` and ``patch``: plain transformers only.

Each reference loads its own copy of the model with ``from_pretrained`` (sdpa, or eager for the
knockout's hand-edited mask), runs the whole model once per intervention, one intervention at a
time, and reads log P(target) at the last position. No attnscope code runs here: no kept
residual, no batching, no sweep.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class Plain:
    """A model folder under plain transformers, and the one-intervention-at-a-time references."""

    def __init__(self, folder: Path, attn: str = "sdpa") -> None:
        self.tok = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModelForCausalLM.from_pretrained(
            str(folder), dtype=torch.float32, attn_implementation=attn
        ).eval()
        cfg = self.model.config
        self.n_layers, self.n_heads, self.n_kv = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads
        self.d = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads

    def ids(self, text: str) -> torch.Tensor:
        return torch.tensor([self.tok(text)["input_ids"]])

    def tid(self, text: str) -> int:
        (tid,) = self.tok(text, add_special_tokens=False)["input_ids"]
        return int(tid)

    def span(self, text: str, needle: str) -> list[int]:
        enc = self.tok(text, return_offsets_mapping=True)
        start = text.index(needle)
        end = start + len(needle)
        return [i for i, (a, b) in enumerate(enc["offset_mapping"]) if a < end and b > start]

    def logprob(self, text: str, target: str) -> float:
        with torch.no_grad():
            logits = self.model(input_ids=self.ids(text)).logits[0, -1].float()
        return float(torch.log_softmax(logits, dim=-1)[self.tid(target)])

    def kept(self, text: str) -> dict[str, list[torch.Tensor]]:
        """Each layer's input, o_proj's input and k_proj's and v_proj's outputs on a clean run, (T, ...)."""
        got: dict[str, list[torch.Tensor]] = {"o": [], "k": [], "v": [], "resid": []}
        handles = []
        for layer in self.model.model.layers:
            attn = layer.self_attn
            handles += [
                layer.register_forward_pre_hook(lambda _m, a: got["resid"].append(a[0][0].detach().clone())),
                attn.o_proj.register_forward_pre_hook(lambda _m, a: got["o"].append(a[0][0].detach().clone())),
                attn.k_proj.register_forward_hook(lambda _m, _a, o: got["k"].append(o[0].detach().clone())),
                attn.v_proj.register_forward_hook(lambda _m, _a, o: got["v"].append(o[0].detach().clone())),
            ]
        try:
            with torch.no_grad():
                self.model(input_ids=self.ids(text))
        finally:
            for h in handles:
                h.remove()
        return got

    def ablate(
        self,
        text: str,
        target: str,
        mode: str = "zero",
        positions: list[int] | None = None,
        means_from: list[str] | None = None,
        layers: list[int] | None = None,
    ) -> list[list[float]]:
        """[layer][head]: log P(target) with the head's slice of o_proj's input replaced, minus the
        clean value (the rows of ``layers`` only, when given)."""
        base = self.logprob(text, target)
        means: list[torch.Tensor] = []
        if mode == "mean":
            sources = [self.kept(t)["o"] for t in (means_from or [text])]
            means = [torch.cat([s[layer] for s in sources]).mean(dim=0) for layer in range(self.n_layers)]
        out = []
        for layer in range(self.n_layers) if layers is None else layers:
            row = []
            for head in range(self.n_heads):

                def hook(_m: Any, args: Any, layer: int = layer, head: int = head) -> Any:
                    x = args[0].clone()
                    sl = slice(head * self.d, (head + 1) * self.d)
                    where = slice(None) if positions is None else positions
                    x[0, where, sl] = 0.0 if mode == "zero" else means[layer][sl]
                    return (x,)

                handle = self.model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(hook)
                try:
                    row.append(self.logprob(text, target) - base)
                finally:
                    handle.remove()
            out.append(row)
        return out

    def knockout(
        self, text: str, target: str, layers: list[int], queries: list[int], keys: list[int], heads: list[int] | None
    ) -> float:
        """log P(target) with an additive mask (causal, and query -> key forbidden in ``heads``) handed to
        the attention of ``layers`` (load the model with attn="eager")."""
        t = self.ids(text).shape[1]
        low = torch.finfo(torch.float32).min
        mask = torch.zeros(1, self.n_heads, t, t)
        mask[..., torch.triu(torch.ones(t, t, dtype=torch.bool), 1)] = low
        for h in range(self.n_heads) if heads is None else heads:
            for q in queries:
                mask[0, h, q, keys] = low

        def hook(_m: Any, args: Any, kwargs: Any) -> Any:
            return args, {**kwargs, "attention_mask": mask}

        attn = [self.model.model.layers[lay].self_attn for lay in layers]
        handles = [a.register_forward_pre_hook(hook, with_kwargs=True) for a in attn]
        try:
            return self.logprob(text, target)
        finally:
            for h in handles:
                h.remove()

    def patch(
        self, into: str, donor: str, site: str, target: str, offset: int = 0, layers: list[int] | None = None
    ) -> list[list[float]]:
        """[layer][i]: log P(target) on ``into`` with one piece taken from the ``donor`` run; positions
        paired from the end when the lengths differ (``offset`` = donor length - into length); the
        rows of ``layers`` only, when given."""
        kept = self.kept(donor)
        t = self.ids(into).shape[1]
        pairs = [(p, p + offset) for p in range(t) if 0 <= p + offset < t + offset]
        mine, theirs = [p for p, _ in pairs], [q for _, q in pairs]
        out = []
        for lay, layer in enumerate(self.model.model.layers):
            if layers is not None and lay not in layers:
                continue
            attn = layer.self_attn
            count = {"head": self.n_heads, "k": self.n_kv, "v": self.n_kv}.get(site, len(pairs))
            row = []
            for i in range(count):
                if site == "resid":

                    def pre(_m: Any, a: Any, lay: int = lay, i: int = i) -> Any:
                        x = a[0].clone()
                        x[0, pairs[i][0]] = kept["resid"][lay][pairs[i][1]]
                        return (x, *a[1:])

                    handle = layer.register_forward_pre_hook(pre)
                elif site == "head":

                    def pre_o(_m: Any, a: Any, lay: int = lay, i: int = i) -> Any:
                        x = a[0].clone()
                        sl = slice(i * self.d, (i + 1) * self.d)
                        x[0, mine, sl] = kept["o"][lay][theirs, sl]
                        return (x,)

                    handle = attn.o_proj.register_forward_pre_hook(pre_o)
                else:

                    def post(_m: Any, _a: Any, o: Any, lay: int = lay, i: int = i) -> Any:
                        y = o.clone()
                        sl = slice(i * self.d, (i + 1) * self.d)
                        y[0, mine, sl] = kept[site][lay][theirs, sl]
                        return y

                    handle = (attn.k_proj if site == "k" else attn.v_proj).register_forward_hook(post)
                try:
                    row.append(self.logprob(into, target))
                finally:
                    handle.remove()
            out.append(row)
        return out


def max_diff(a: Any, b: Any) -> float:
    return float((torch.tensor(a, dtype=torch.float64) - torch.tensor(b, dtype=torch.float64)).abs().max())
