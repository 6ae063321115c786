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
    "generate.title": "{model}: 응답을 토큰 하나씩 본다",
    "generate.selection": "레이어 {layers}개 × 헤드 {heads}개의 비율이다(모델은 레이어 {n_layers}개, 헤드 {n_heads}개).",
    "generate.greedy": "매 단계 확률이 가장 큰 토큰을 고른다(그리디).",
    "generate.sampled": "온도 {temperature}, 시드 {seed}로 토큰을 뽑는다.",
    "generate.stop_eos": "새 토큰 {n}개 뒤 응답 끝 토큰에서 멈췄다.",
    "generate.stop_max": "새 토큰 상한 {n}개에서 멈췄다.",
    "generate.prompt": "프롬프트는 토큰 {n}개다.",
    "generate.answer": "응답",
    "generate.col_step": "#",
    "generate.col_token": "토큰",
    "generate.col_prob": "확률",
    "generate.col_words": "비율이 큰 키(고른 헤드의 평균)",
    "generate.col_heads": "프롬프트를 많이 본 헤드",
    "generate.where": "응답의 토큰마다 어디를 봤는가(그 토큰을 만든 위치의 비율)",
    "generate.shares": "구간별 비율 합계(레이어 {groups})",
    "generate.sink": "(싱크)",
    "generate.in_answer": "(응답)",
    "generate.sink_note": "(싱크): 위치 0이다. 헤드가 쓸 데 없는 비율을 이곳에 몰아 둔다. 이를 어텐션 싱크라고 한다.",
    "generate.heads_note": "프롬프트를 많이 본 헤드: 헤드의 비율 중 프롬프트 본문에 간 몫이다. 위치 0과 템플릿 토큰은 뺀다.",
    "generate.prob_note": "확률: 토큰을 뽑은 분포에서 그 토큰의 확률이다.",
    "generate.cached": "모든 비율은 그 토큰을 만든 KV 캐시 단계에서 바로 잡았다. Q는 하나, K는 캐시 전체다.",
    "generate.more_steps": "응답 토큰 {total}개 중 {shown}개를 자세히 보였다. 다른 토큰은 --steps로 고른다(예: 0-4,10).",
    # == end generate ==
    # == segments and chat template (issue 15) ==
    "segments.template": "템플릿",
    "segments.system": "시스템",
    "segments.system_inserted": "시스템(템플릿이 넣음)",
    "segments.user": "사용자 {turn}",
    "segments.assistant": "어시스턴트 {turn}",
    "segments.prompt": "프롬프트",
    "segments.answer": "응답",
    "segments.warn_inserted": "시스템 메시지를 쓰지 않았는데 템플릿이 넣었다: “{text}”",
    "segments.warn_reencode": "템플릿이 만든 글을 다시 토큰으로 나누면 apply_chat_template(tokenize=True)와 토큰 ID가 다르다. 특수 토큰이 쪼개지거나 겹쳤다.",
    "segments.warn_no_generation_prompt": "템플릿이 생성 프롬프트를 붙이지 않았다. 응답이 시작되는 자리가 표시되지 않는다.",
    "segments.rendered": "채팅 템플릿이 만든 글이다. 토큰마다 구간을 붙였다.",
    "segments.col_segment": "구간",
    "segments.counts": "구간 {n}개: {list}",
    # == end segments ==
    # == first hour: progress, cache, width (issue 12) ==
    # == end first hour ==
}
