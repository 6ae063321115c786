from attnscope.core.toy import toy
from attnscope.render import Ctx, to_text, view
from attnscope.results import from_json


def test_toy_round_trips() -> None:
    result = toy("hello")
    assert from_json(result.to_json()) == result
    assert to_text(view(result, Ctx())).strip() == "hello has 5 characters"
