"""The Korean catalogue: every word the views print, keyed by view.

Keep the keys in the same order as the other language's catalogue; a test fails when
a key exists in one and not the other. Each view's keys sit in its own section.
"""

MESSAGES: dict[str, str] = {
    # == common ==
    "common.sum": "합계",
    "common.model": "모델 {id}: 레이어 {layers}개, 헤드 {heads}개(K·V 헤드 {kv_heads}개), {dtype}, {device}",
    "common.query": "쿼리",
    "common.key": "키",
    "common.token_span": "토큰 {where}: {labels}",
    "common.tokens_span": "토큰 {where}: {labels}",
    "common.selection": "레이어 {layers}  헤드 {heads}",
    "common.layer_head": "레이어 {layer} 헤드 {head}",
    "common.kv_head": "K·V 헤드 {kv_head}",
    "common.mean": "평균",
    "common.max": "최댓값",
    "common.self": "<- 자기 자신",
    "common.note_no_sink": "--no-sink: 위치 0을 빼고, 행마다 위치 {positions}의 비율을 합계가 1이 되게 다시 맞췄다.",
    "common.warning.ambiguous_query": "경고: 프롬프트에 '{text}' 자리가 {count}곳 있다. 첫 번째 자리를 쓴다(다른 자리는 --occurrence 1~{count}로 고른다).",
    "common.warning.ambiguous_key": "경고: 프롬프트에 '{text}' 자리가 {count}곳 있다. --key에는 첫 번째 자리를 쓴다(다른 자리는 --key-occurrence 1~{count}로 고른다).",
    "common.warning.sink_key_excluded": "경고: --no-sink는 위치 0을 빼므로, 키의 토큰 0은 점수에 더해지지 않는다.",
    "common.warning.padded_by_attnscope": "토크나이저가 이 배치를 직접 채우지 않아서, 토큰 ID {value}로 빈칸을 채웠다.",
    # == end common ==
    # == tokens ==
    "tokens.summary": "토큰 {tokens}개, 단어 {words}개",
    "tokens.chat": "  (채팅 템플릿 적용)",
    "tokens.col.index": "위치",
    "tokens.col.id": "토큰 ID",
    "tokens.col.token": "토큰",
    "tokens.col.offsets": "글자 범위",
    "tokens.col.word": "단어",
    # == end tokens ==
    # == weights ==
    "weights.query_token": "  (토큰 {index} '{label}')",
    "weights.strip_title": "키 × 레이어(선택한 헤드의 평균, 진할수록 비율이 크다)",
    "weights.strip_last_digit": "레이어 {layers}. 머리글에는 레이어 번호의 끝자리만 적는다. ",
    "weights.strip_scale": "음영 눈금 0~{top}",
    "weights.chart_title": "쿼리가 섞어 오는 비율",
    "weights.excluded": "제외(어텐션 싱크)",
    "weights.partial": "{label} (쿼리까지)",
    "weights.note_chat": "--chat: 마지막 위치는 생성 프롬프트의 끝이다. 어시스턴트의 첫 토큰을 이 위치에서 예측한다.",
    "weights.note_by_word": "--by word: 단어 막대는 그 단어에 든 토큰들의 비율을 더한 값이다.",
    "weights.note_mean": "레이어 {layers}개 × 헤드 {heads}개의 평균이다.",
    "weights.note_max": "레이어 {layers}개 × 헤드 {heads}개 중 최댓값이다. 막대를 더해도 1이 아닐 수 있다.",
    # == end weights ==
    # == mask ==
    # == end mask ==
    # == heads ==
    "heads.summary": "헤드 {total}개 중 {above}개가 키에 0.5보다 큰 비율을 둔다.",
    "heads.top_title": "키에 두는 비율이 큰 헤드 {n}개(전체 {total}개 중)",
    "heads.col.layer": "레이어",
    "heads.col.head": "헤드",
    "heads.col.kv": "K·V",
    "heads.col.score": "점수",
    "heads.col.row": "행 {positions}",
    "heads.col.row_binned": "행 {positions} (한 칸에 {size}개, 최댓값)",
    "heads.col.elsewhere": "키 밖 최대",
    "heads.row_legend": "행: 위치 0부터 쿼리까지. 진할수록 비율이 크다(행마다 제 눈금). [ ]는 키, ·는 행 최댓값의 0.5% 미만이다.",
    "heads.col.best": "최대",
    "heads.heatmap_caption": "레이어와 헤드별 점수(진할수록 크다), 눈금 0~{top}. │는 K·V 그룹을 나눈다(K·V 헤드 {kv_heads}개).",
    "heads.note_score": "점수는 쿼리가 키에 두는 비율을 키의 토큰 {n}개에 걸쳐 더한 값이다.",
    "heads.note_last": "쿼리는 토큰 {n}개에 걸쳐 있다. 마지막 토큰의 행을 쓴다(--query-agg last).",
    "heads.note_mean": "쿼리는 토큰 {n}개에 걸쳐 있다. 그 행들의 평균을 쓴다(--query-agg mean).",
    # == end heads ==
    # == matrix ==
    "matrix.positions": "위치 {positions} (전체 {n}개)",
    "matrix.tokens": "토큰 {n}개",
    "matrix.by.token": "토큰별",
    "matrix.by.word": "단어별",
    "matrix.by.block": "블록별",
    "matrix.top.token": "최대 키",
    "matrix.top.word": "최대 단어",
    "matrix.top.block": "최대 블록",
    "matrix.scale": "눈금 0~1: ",
    "matrix.blank": "표시 없음 <0.005   · 마스크: 키가 쿼리보다 뒤에 있다(인과 마스크)",
    "matrix.legend_block": "행과 열의 번호는 블록의 첫 위치이고, 이름은 블록의 첫 토큰이다.",
    "matrix.legend_word": "행과 열의 번호는 단어 번호다.",
    "matrix.note_by_word": "--by word: 각 칸은 열 단어의 키 토큰 비율을 더한 값을 행 단어의 쿼리 토큰에 걸쳐 평균낸 것이다. 행마다 합계는 여전히 1이다.",
    "matrix.note_too_many_words": "단어가 {n}개라 다 그릴 수 없어서, 토큰 블록으로 묶어 보인다.",
    "matrix.note_condensed": "압축: 토큰 {n}개를 최대 {size}개씩 블록으로 묶었다. 각 칸은 열 블록의 키 토큰 비율을 더한 값을 행 블록의 쿼리 토큰에 걸쳐 평균낸 것이다(JSON에는 모든 비율이 남는다).",
    "matrix.note_window": "--window {start}:{end}: '<{start}' 열은 각 행이 키 {before}에 두는 비율이다.",
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
    "weights.others_word": "나머지 단어 {n}개",
    "weights.others_token": "나머지 토큰 {n}개",
    "weights.chart_title_norm": "키마다 ‖비율 × f(x)‖의 몫. 실제로 더하는 벡터의 크기로 잰다(노름 ÷ 키 전체의 합).",
    "weights.sink": (
        "위치 0({label})이 비율 {share}를 가져간다. 첫 위치에 비율이 몰리는 현상, 어텐션 싱크다. "
        "--no-sink는 위치 0을 빼고 다시 나눈다. --measure norm은 키마다 더하는 벡터의 크기로 잰다."
    ),
    "weights.sink_norm": (
        "위치 0({label})이 노름으로 재도 {share}를 가져간다. 더하는 벡터의 크기로 봐도 어텐션 싱크다. "
        "--no-sink는 위치 0을 뺀다."
    ),
    "weights.hardest_title_word": "단어마다 가장 많이 보는 헤드(그 단어에 준 몫이 가장 큰 헤드)",
    "weights.hardest_title_token": "토큰마다 가장 많이 보는 헤드(그 토큰에 준 몫이 가장 큰 헤드)",
    "weights.hardest_hint": (
        "위의 행 {count}개에서 골랐다(다시 실행하지 않는다). 위치 0과 Q 자신의 단어는 뺐다. "
        "heads 명령(-q Q단어 -k 키단어)은 한 단어에 대해 모든 헤드의 순위를 보여 준다."
    ),
    "weights.completeness": (
        "완전성 검사: 헤드와 키 전체에 걸친 비율 × f(x)의 합은 Q 위치의 o_proj 출력과 같다. "
        "레이어 {layers}개에서 가장 큰 차이는 {diff}다."
    ),
    "weights.note_norm": (
        "--measure norm: 레이어와 헤드마다 ‖비율 × f(x)‖에서 키가 차지하는 몫이다(Kobayashi 외, 2020). "
        "f(x) = (x W_V + b_V) W_O이고, W_O는 그 헤드에 해당하는 열만 쓴다."
    ),
    "weights.note_by_token_hint": "--by token은 토큰마다 보여 준다.",
    # == end measure norm ==
    # == figures (issue 14) ==
    "figures.model": "{model}: 레이어 {layers}개, 헤드 {heads}개, K·V 헤드 {kv}개",
    "figures.query": "쿼리 “{query}” (위치 {pos})",
    "figures.weights.title": "쿼리가 섞는 비율",
    "figures.selection.mean": "레이어 {layers}개 × 헤드 {heads}개의 평균",
    "figures.selection.max": "레이어 {layers}개 × 헤드 {heads}개의 최댓값. 막대를 더해도 1이 아닐 수 있다",
    "figures.selection.one": "레이어 {layer} 헤드 {head} (K·V 헤드 {kv})",
    "figures.self": "<- 자기 자신도 포함",
    "figures.sink_excluded": "제외 (어텐션 싱크)",
    "figures.by_word": "단어 막대는 그 단어 토큰들의 비율을 더한 값이다",
    "figures.to_query": "(쿼리까지)",
    "figures.no_sink": "위치 0을 빼고 헤드마다 위치 1~{q}의 비율 합계를 다시 1로 맞췄다",
    "figures.strip.title": "키 × 레이어: 각 키의 비율, 고른 헤드의 평균",
    "figures.layer": "레이어",
    "figures.head": "헤드",
    "figures.scale": "범위 0~{top}, 진할수록 크다",
    "figures.heads.title": "“{query}”에서 “{key}”로 가는 비율, 레이어와 헤드마다",
    "figures.heads.best": "최고",
    "figures.heads.kv": "세로선은 K·V 헤드 묶음을 나눈다 (K·V 헤드 {kv}개)",
    "figures.heads.above": "헤드 {total}개 중 {n}개가 키에 0.5보다 큰 비율을 준다",
    "figures.matrix.title": "레이어 {layer} 헤드 {head} (K·V 헤드 {kv}): 모든 쿼리 행",
    "figures.matrix.rows": "행: 계산하는 위치(Q), 열: 참고하는 위치(K)",
    "figures.matrix.masked": "회색: 마스크로 지운 칸이다. 키가 쿼리보다 뒤에 있다",
    "figures.matrix.before": "<{start}: 그 행이 키 0~{last}에 준 비율",
    "figures.matrix.by_word": "행과 열은 단어다",
    "figures.matrix.by_block": "행과 열은 위치 묶음이고, 이름은 묶음의 첫 토큰이다",
    "figures.mask.title": "마스크: 위치마다 참고하는 위치",
    "figures.mask.legend": "행: 계산하는 위치, 열: 참고하는 위치, 1 = 참고함, . = 비율 0",
    "figures.mask.causal": "causal mask만",
    "figures.mask.combined": "causal mask와 padding mask",
    "figures.mask.sequence": "입력 {b}",
    "figures.mask.pad_row": "빈칸 자리라 결과를 쓰지 않는다",
    "figures.mask.agrees": "모델이 실제로 쓴 마스크와 같다",
    "figures.mask.disagrees": "모델이 실제로 쓴 마스크와 다르다",
    "figures.trace.title": "위치 {pos} “{tok}” (토큰 ID {id})의 벡터, 레이어마다",
    "figures.trace.stage": "단계",
    "figures.trace.norm": "크기",
    "figures.trace.cos": "이전 행과 cos",
    "figures.trace.lens": "로짓 렌즈 상위 {k}",
    "figures.trace.embedding": "임베딩",
    "figures.trace.after": "레이어 {n} 뒤",
    # == end figures ==
    # == explore page (issue 14) ==
    "explore.title": "attnscope 탐색",
    "explore.lang_name": "한국어",
    "explore.tokens": "프롬프트의 토큰",
    "explore.tokens_hint": "토큰을 누르면 그 토큰이 쿼리가 된다. 색이 진할수록 쿼리가 그 토큰에 주는 비율이 크다.",
    "explore.by": "키 단위",
    "explore.by_token": "토큰",
    "explore.by_word": "단어",
    "explore.sink": "위치 0 포함 (어텐션 싱크)",
    "explore.all": "모든 레이어와 헤드",
    "explore.sel.all": "레이어 {layers}개 × 헤드 {heads}개 전체의 평균",
    "explore.sel.layer": "레이어 {layer}, 헤드 {heads}개의 평균",
    "explore.chart_hint": "막대를 누르면 그 키로 레이어 × 헤드 표를 그린다.",
    "explore.grid.title": "“{query}”에서 “{key}”로 가는 비율, 레이어와 헤드마다",
    "explore.grid_hint": "칸을 누르면 그 헤드를 고른다. 레이어 번호를 누르면 그 레이어의 평균을 본다.",
    "explore.matrix.title": "causal 행렬 전체: {sel}",
    "explore.matrix_hint": "행: 계산하는 위치(Q), 열: 참고하는 위치(K). 행을 누르면 그 위치가 쿼리가 된다.",
    "explore.quant": "비율은 1/{levels}의 정수배로 저장했다. 행마다 합계가 정확히 1이 되도록 반올림했으므로, 보이는 비율과 모델 값의 차이는 {err} 이하다.",
    "explore.partial": "이 프롬프트는 토큰이 {n}개다. 모든 행을 저장하는 한도 {limit}개를 넘는다. 그래서 위치 {positions}의 행만 저장했다. 이 위치만 쿼리가 될 수 있고, 행렬은 없다.",
    "explore.not_stored": "이 위치의 행은 페이지에 저장하지 않았다",
    "explore.sink_first": "위치 0은 자기 자신만 참고한다. 위치 0을 빼면 남는 것이 없다.",
    "explore.nojs": "이 페이지는 자바스크립트로 그린다. 자바스크립트를 켜야 어텐션이 보인다.",
    "explore.wrote": "{path}에 썼다 ({size})",
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
