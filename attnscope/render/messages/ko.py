"""The Korean catalogue: every word the views print, keyed by view.

Keep the keys in the same order as the other language's catalogue; a test fails when
a key exists in one and not the other. Each view's keys sit in its own section.
"""

MESSAGES: dict[str, str] = {
    # == common ==
    "common.sum": "합계",
    # == end common ==
    # == tokens ==
    # == end tokens ==
    # == weights ==
    # == end weights ==
    # == mask ==
    # == end mask ==
    # == heads ==
    # == end heads ==
    # == matrix ==
    # == end matrix ==
    # == info ==
    # == end info ==
    # == trace ==
    # == end trace ==
    # == explain ==
    # == end explain ==
    # == rope ==
    # == end rope ==
    # == reuse ==
    # == end reuse ==
    # == roles (issue 13) ==
    "roles.source_random": "무작위 토큰 {length}개를 두 번 이어 붙였다(토큰 {total}개, 시드 {seed}).",
    "roles.source_random_bos": "BOS 뒤에 무작위 토큰 {length}개를 두 번 이어 붙였다(토큰 {total}개, 시드 {seed}).",
    "roles.source_prompt": "프롬프트의 토큰 {total}개로 쟀다.",
    "roles.model": "모델 {id}: 레이어 {layers}개, 헤드 {heads}개(K·V 헤드 {kv_heads}개)",
    "roles.top_title": "역할마다 점수가 높은 헤드 {top}개(레이어, 헤드, 점수)",
    "roles.role.previous_token": "바로 앞 토큰",
    "roles.role.duplicate_token": "같은 토큰",
    "roles.role.induction": "인덕션",
    "roles.role.sink": "어텐션 싱크",
    "roles.sink_rate": "싱크 헤드(점수 > {eps})는 {heads}개 중 {over}개다({rate:.1f}%).",
    "roles.scores_note": (
        "바로 앞 토큰, 같은 토큰, 인덕션 점수는 헤드의 비율 전체 중 그 역할의 자리에 간 몫이다"
        "(TransformerLens detect_head, mul). 어텐션 싱크 점수는 위치 0이 받는 비율을 모든 Q에 걸쳐 평균한 값이다"
        "(Gu 외, 2024)."
    ),
    "roles.grid_title": "레이어 × 헤드. 0~1로 칠했다(진할수록 높다).",
    # == end roles ==
    # == measure norm (issue 13) ==
    # == end measure norm ==
    # == figures (issue 14) ==
    # == end figures ==
    # == explore page (issue 14) ==
    # == end explore page ==
    # == generate (issue 15) ==
    # == end generate ==
    # == segments and chat template (issue 15) ==
    # == end segments ==
    # == first hour: progress, cache, width (issue 12) ==
    # == end first hour ==
}
