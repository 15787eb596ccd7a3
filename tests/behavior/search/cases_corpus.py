"""``search.messages`` on a planted corpus: every expected hit is in the top 10.

Twenty conversations of noise in English, Russian and Chinese (a fixed seed; the noise
shares words with the planted messages, so ranking matters), then planted messages with
known answers: exact words, a prefix, a phrase, case and accents, Russian with ё, Chinese
and Japanese without spaces. Each query must put its planted message among the first 10
hits, and a word found nowhere finds nothing.
"""

from __future__ import annotations

import random

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.search.cases_index import find, node_ids, settled

NOISE = {
    "en": "the recipe with a trip plan for dinner and notes about the garden weather".split(),
    "ru": "рецепт план поездки ужин заметки про сад погода и с для".split(),
    "zh": ["这个", "计划", "晚餐", "花园", "天气", "旅行", "笔记", "食谱"],
}

PLANTED = {
    "sumac": "The recipe with sumac and pomegranate molasses, for the lamb",
    "borscht": "Рецепт борща со свёклой и укропом, на ужин",
    "anise": "这个配方需要八角和桂皮",
    "brulee": "Crème brûlée au café, the dessert for the trip",
    "tokyo": "東京の天気は晴れです",
}

#: query -> the planted message it must find in its top 10.
QUERIES = {
    "sumac": "sumac",
    "recipe sumac": "sumac",
    "pomegran": "sumac",  # the last word, a prefix
    '"pomegranate molasses"': "sumac",  # a phrase
    "SUMAC Recipe": "sumac",  # case
    "борща": "borscht",
    "свеклой": "borscht",  # ё folds to е
    "рецепт укр": "borscht",  # Russian, the last word a prefix
    "八角": "anise",
    "配方需要": "anise",  # Chinese without spaces: a phrase of bigrams
    "creme brulee": "brulee",  # accents
    "CAFÉ dessert": "brulee",
    "天気": "tokyo",  # Japanese
}


def _noise(rng: random.Random) -> str:
    """A message of noise: 6 to 30 words of one language."""
    language = rng.choice(sorted(NOISE))
    words = [rng.choice(NOISE[language]) for _ in range(rng.randint(6, 30))]
    return ("" if language == "zh" else " ").join(words)


async def case_a_planted_corpus_puts_every_expected_hit_in_the_top_10(ctx: Ctx) -> None:
    store = await ctx.store()
    rng = random.Random(38)
    planted: dict[str, str] = {}
    for i in range(20):
        tid = await store.create_thread(f"Noise {i}")
        for turn in range(8):
            payload = text(_noise(rng)) if turn % 2 == 0 else answer(_noise(rng))
            kind = "user_message" if turn % 2 == 0 else "assistant_message"
            await store.append(tid, kind, payload)
        if i % 4 == 0:  # the planted messages sit among the noise
            name = sorted(PLANTED)[i // 4]
            planted[name] = (await store.append(tid, "user_message", text(PLANTED[name])))["nodeId"]
    assert sorted(planted) == sorted(PLANTED)
    await settled(store)
    for query, name in QUERIES.items():
        found = await find(store, query, limit=10)
        assert planted[name] in node_ids(found), (query, found)
    assert node_ids(await find(store, "xylophone")) == []
    assert node_ids(await find(store, '"molasses pomegranate"')) == []  # a phrase in order
