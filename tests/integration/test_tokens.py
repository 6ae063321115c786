"""Readable tokens, offsets, words and query spans (tiny byte-level BPE trained in the test)."""

from __future__ import annotations

import pytest

from attnscope.core.prompt import tokens
from attnscope.core.prompt.spec import Text
from attnscope.errors import AttnscopeError
from attnscope.results.common import ResultWarning

from support import SEED


def merged_text(enc: tokens.Encoded) -> str:
    out, at = [], 0
    for t in enc.tokens:
        out.append(enc.text[max(at, t.start) : t.end])
        at = max(at, t.end)
    return "".join(out)


def test_no_mojibake_and_pieces_marked(tokenizer):
    enc = tokens.encode(tokenizer, SEED)
    labels = [t.label for t in enc.tokens]
    assert not any(ch in "".join(labels) for ch in "ìëê\ufffdĠ")
    pieces = [t for t in enc.tokens if t.piece]
    assert pieces, "the tiny tokenizer must split some Korean syllables"
    for t in pieces:
        k, n = map(int, t.piece.split("/"))
        assert 1 <= k <= n and t.label == f"{t.text.strip()} {t.piece}"
    # all the pieces of one character, numbered 1..n in order
    first = pieces[0]
    same = [t for t in enc.tokens if t.start == first.start and t.end == first.end and t.piece]
    assert [t.piece for t in same] == [f"{i}/{len(same)}" for i in range(1, len(same) + 1)]


def test_offsets_rebuild_the_prompt(tokenizer):
    enc = tokens.encode(tokenizer, SEED)
    assert merged_text(enc) == SEED
    for t in enc.tokens:
        assert t.text == SEED[t.start : t.end]


def test_words_follow_the_notes_split(tokenizer):
    enc = tokens.encode(tokenizer, SEED)
    assert [w.text for w in enc.words] == ["민수는", "사과를", "샀다.", "그는", "그것을", "먹었다."]
    covered = sorted(i for w in enc.words for i in w.tokens)
    assert covered == list(range(len(enc.tokens)))
    for w in enc.words:
        assert all(enc.tokens[i].word == w.index for i in w.tokens)


def test_chat_template_specials_visible(tokenizer):
    enc = tokens.encode(tokenizer, "안녕", chat=True, system="짧게")
    specials = [t.label for t in enc.tokens if t.special]
    assert specials.count("<|im_start|>") == 3 and "<|im_end|>" in specials
    assert enc.text.endswith("<|im_start|>assistant\n")
    assert enc.tokens[-1].label == "↵"
    assert merged_text(enc) == enc.text


def test_query_span_and_position(tokenizer):
    enc = tokens.encode(tokenizer, SEED)
    q = tokens.find_query(enc, "그것을")
    assert enc.text[enc.tokens[q.span[0]].start : enc.tokens[q.span[-1]].end].strip() == "그것을"
    assert q.index == q.span[-1]


def test_ambiguous_query_warns_and_takes_first(tokenizer):
    enc = tokens.encode(tokenizer, SEED)
    warnings: list[ResultWarning] = []
    first = tokens.find_query(enc, "그", warnings=warnings)
    second = tokens.find_query(enc, "그", occurrence=2)
    assert warnings == [ResultWarning(code="ambiguous_query", text="그", count=2)]
    assert first.index < second.index


@pytest.mark.parametrize(
    "query,message",
    [
        ("바나나", "not in the prompt; its words are: 민수는, 사과를"),
        (Text("그", occurrence=3), "out of range"),
        (99, "out of range"),
        (True, "give a text, a position or None"),
    ],
)
def test_bad_queries(tokenizer, query, message):
    enc = tokens.encode(tokenizer, SEED)
    with pytest.raises(AttnscopeError, match=message):
        tokens.pick_query(enc, query)


def test_negative_pos(tokenizer):
    enc = tokens.encode(tokenizer, SEED)
    assert tokens.query_at(enc, -1).index == len(enc.tokens) - 1
    assert tokens.query_at(enc, 0).index == 0


def test_empty_prompt(tokenizer):
    with pytest.raises(AttnscopeError, match="empty"):
        tokens.encode(tokenizer, "  \n ")


def _with_bos(fast):
    from support.tiny import with_bos

    return with_bos(fast)


def _metaspace_tokenizer():
    """A SentencePiece-style tokenizer (pieces with ▁, not byte-level), prepending <bos>."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    from support.tiny import CORPUS

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<bos>", "<unk>"], show_progress=False)
    tok.train_from_iterator(CORPUS * 3, trainer=trainer)
    bos = tok.token_to_id("<bos>")
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", bos)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", pad_token="<pad>", unk_token="<unk>"), bos


@pytest.mark.parametrize("kind", ["byte-level", "metaspace"])
def test_a_prepended_bos_is_its_own_special_token_and_word(tokenizer, kind):
    tok, bos = _with_bos(tokenizer) if kind == "byte-level" else _metaspace_tokenizer()
    enc = tokens.encode(tok, SEED)
    assert enc.ids[0] == bos and len(enc.tokens) == len(enc.ids)
    first = enc.tokens[0]
    assert (first.special, first.label, first.start, first.end, first.word) == (True, "<bos>", 0, 0, 0)
    assert enc.words[0].text == "<bos>" and enc.words[0].tokens == [0]
    assert not any(t.special for t in enc.tokens[1:])
    # the prompt's own words follow, as the text splits them
    assert [w.text for w in enc.words[1:]] == SEED.split()
    assert merged_text(enc) == SEED
    if kind == "byte-level":  # the same tokens as without the BOS, one place later
        plain = tokens.encode(tokenizer, SEED)
        assert [(t.label, t.start, t.end) for t in enc.tokens[1:]] == [(t.label, t.start, t.end) for t in plain.tokens]
