// The search benchmark's corpus (issue 38): seeded, deterministic panelot_v1 records.
// 1,000 threads of 100 messages (100,000 messages; --quick: 50 threads of 40) of mixed
// length (a line to a few pages), in English, Chinese and Russian (each thread mostly one
// language, some messages in another), with folders, tags, pinned and archived threads;
// and the 200 queries of `search_query` drawn from the same vocabulary (see QUERY_KINDS).
import { int, makeRng, pick, uuid } from "./data.mjs";

export const SEARCH_SEED = 20261204;
export const CORPUS_SIZES = {
  full: { threads: 1000, messages: 100, queries: 200 },
  quick: { threads: 50, messages: 40, queries: 60 },
};
/** The kinds of query, in turn (issue 38): one word, two words, prefix, phrase, CJK, filtered. */
export const QUERY_KINDS = ["word", "two_words", "prefix", "phrase", "cjk", "filtered"];

const BASE_TS = 1_700_000_000_000;
const FOLDERS = ["folder-1", "folder-2", "folder-3", "folder-4"];
const TAGS = ["work", "research", "code", "travel", "recipes"];

const EN = (
  "the a of and to in is that for it with as on was be by this are from or have an " +
  "not at which but we can all will one there their has more if about would when what " +
  "search index query storage panel thread message reply model token budget context " +
  "recipe sumac lemon garlic onion pepper saffron cumin oven bake roast simmer stir " +
  "python browser database transaction cursor schema migration backup restore export " +
  "journey train ticket hotel museum river mountain island harbour bridge village " +
  "theorem proof lemma integral matrix vector tensor gradient entropy probability " +
  "invoice contract meeting deadline quarterly revenue forecast customer supplier " +
  "café naïve résumé façade jalapeño über coördinate Zürich São Paulo Ångström"
).split(" ");
const RU = (
  "и в не на что с как это по но из у за от о так для же вы мы он она они был " +
  "поиск индекс запрос хранилище панель сообщение ответ модель контекст бюджет " +
  "рецепт сумах лимон чеснок лук перец шафран духовка запечь тушить " +
  "база данных транзакция курсор схема миграция резервная копия восстановление " +
  "поездка поезд билет гостиница музей река гора остров гавань мост деревня " +
  "теорема доказательство интеграл матрица вектор градиент вероятность " +
  "счёт договор встреча срок выручка прогноз клиент поставщик ёлка Ёжик"
).split(" ");
// Common Han characters; Chinese text has no spaces between words.
const ZH = (
  "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去" +
  "之过家学对可里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又" +
  "如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明" +
  "搜索索引查询存储面板消息回复模型上下文预算食谱漆树柠檬大蒜洋葱胡椒藏红花烤箱数据库事务" +
  "游标迁移备份恢复旅行火车票酒店博物馆河山岛港桥村庄定理证明积分矩阵向量梯度概率发票合同"
).split("");

/** A Zipf-like pick: the first items of `items` come up far more often. */
const skewed = (rng, items) => items[Math.floor(items.length * rng() ** 2.2)];

/** Text of about `length` characters in `lang` ("en", "ru" or "zh"). */
export function sentenceText(rng, lang, length) {
  let s = "";
  if (lang === "zh") {
    while (s.length < length) {
      const run = int(rng, 6, 24);
      for (let i = 0; i < run; i++) s += skewed(rng, ZH);
      s += rng() < 0.8 ? "，" : "。";
    }
    return s.slice(0, length);
  }
  const words = lang === "ru" ? RU : EN;
  let sentence = 0;
  while (s.length < length) {
    let w = skewed(rng, words);
    if (sentence === 0) w = w[0].toUpperCase() + w.slice(1);
    s += w;
    sentence += 1;
    if (sentence > int(rng, 6, 18)) {
      s += ". ";
      sentence = 0;
    } else s += rng() < 0.08 ? ", " : " ";
  }
  return s.slice(0, length);
}

/** Mixed lengths: mostly a line or a paragraph, sometimes a page or a few. */
function messageLength(rng) {
  const r = rng();
  if (r < 0.4) return int(rng, 10, 80);
  if (r < 0.85) return int(rng, 80, 420);
  if (r < 0.98) return int(rng, 420, 1600);
  return int(rng, 1600, 6000);
}

function threadLang(rng) {
  const r = rng();
  return r < 0.6 ? "en" : r < 0.8 ? "zh" : "ru";
}

/**
 * The corpus: `{threads, nodes, stats}` in the panelot_v1 wire form (linear threads of
 * alternating user and assistant messages, a tool result now and then). Deterministic
 * for a size: the same records on every run and in every page.
 */
export function makeSearchCorpus(size) {
  const rng = makeRng(SEARCH_SEED);
  const threads = [];
  const nodes = [];
  let chars = 0;
  const langs = { en: 0, zh: 0, ru: 0 };
  for (let t = 0; t < size.threads; t++) {
    const threadId = `st-${String(t).padStart(5, "0")}-${uuid(rng).slice(0, 8)}`;
    const lang = threadLang(rng);
    const updatedAt = BASE_TS + t * 3_600_000;
    let parentId = null;
    for (let m = 0; m < size.messages; m++) {
      const msgLang = rng() < 0.9 ? lang : threadLang(rng);
      const body = sentenceText(rng, msgLang, messageLength(rng));
      chars += body.length;
      langs[msgLang] += 1;
      const r = rng();
      const type = r < 0.05 ? "tool_result" : m % 2 === 0 ? "user_message" : "assistant_message";
      let payload;
      if (type === "user_message") payload = { content: [{ type: "text", text: body }] };
      else if (type === "assistant_message") {
        payload = {
          content: [{ type: "text", text: body }],
          model: "claude-sonnet-4",
          connectionId: "conn-main",
        };
      } else {
        payload = { itemId: uuid(rng), ok: true, contentForLlm: [{ type: "text", text: body }] };
      }
      const id = `${threadId}-n${String(m).padStart(4, "0")}`;
      const ts = updatedAt - (size.messages - m) * 60_000;
      nodes.push({ id, threadId, parentId, seq: m + 1, ts, type, payload });
      parentId = id;
    }
    const thread = {
      id: threadId,
      title: sentenceText(rng, lang, int(rng, 12, 60)).trim(),
      createdAt: updatedAt - size.messages * 60_000,
      updatedAt,
      leafId: parentId,
      tags: rng() < 0.4 ? [pick(rng, TAGS)] : [],
      pinned: rng() < 0.05,
      archived: rng() < 0.1,
      stats: { turns: size.messages / 2, totalTokens: 0, costUsd: 0 },
      scopeOrigins: [],
    };
    if (rng() < 0.5) thread.folderId = pick(rng, FOLDERS);
    threads.push(thread);
  }
  return { threads, nodes, stats: { threads: threads.length, messages: nodes.length, chars, langs } };
}

/** The text a search engine indexes for a node (user/assistant content, tool results). */
export function nodeText(node) {
  const blocks = node.payload.content ?? node.payload.contentForLlm ?? [];
  return blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n");
}

/** Two words that follow each other in a text in `lang` (for phrase queries). */
function phraseFrom(rng, corpus) {
  for (;;) {
    const node = corpus.nodes[Math.floor(rng() * corpus.nodes.length)];
    const words = nodeText(node)
      .split(/[\s.,，。]+/)
      .filter((w) => w.length > 2);
    if (words.length >= 3 && !/[\u4e00-\u9fff]/.test(words[0])) {
      const i = Math.floor(rng() * (words.length - 1));
      return `"${words[i]} ${words[i + 1]}"`;
    }
  }
}

/** Two to four Chinese characters that occur together in a message (a CJK query). */
function cjkFrom(rng, corpus) {
  for (;;) {
    const node = corpus.nodes[Math.floor(rng() * corpus.nodes.length)];
    const runs = nodeText(node).match(/[\u4e00-\u9fff]{4,}/g);
    if (runs) {
      const run = pick(rng, runs);
      const length = int(rng, 2, 4);
      const start = Math.floor(rng() * (run.length - length + 1));
      return run.slice(start, start + length);
    }
  }
}

/**
 * `count` queries `{kind, text, filters?}`, the kinds of QUERY_KINDS in turn, seeded:
 * the same list for both engines. Words come from the vocabulary (so most find hits),
 * prefixes are a word's first 3-4 letters, CJK queries two to four characters of a
 * message, phrases two neighbouring words of a message.
 */
export function makeQueries(corpus, count) {
  const rng = makeRng(SEARCH_SEED + 1);
  const content = (items) => items.filter((w) => w.length > 3);
  const en = content(EN);
  const ru = content(RU);
  const word = () => (rng() < 0.7 ? pick(rng, en) : pick(rng, ru));
  const out = [];
  for (let i = 0; i < count; i++) {
    const kind = QUERY_KINDS[i % QUERY_KINDS.length];
    if (kind === "word") out.push({ kind, text: word() });
    else if (kind === "two_words") out.push({ kind, text: `${word()} ${word()}` });
    else if (kind === "prefix") {
      const w = word();
      out.push({ kind, text: w.slice(0, int(rng, 3, Math.min(4, w.length))) });
    } else if (kind === "phrase") out.push({ kind, text: phraseFrom(rng, corpus) });
    else if (kind === "cjk") out.push({ kind, text: cjkFrom(rng, corpus) });
    else {
      const filters =
        rng() < 0.5 ? { folder: pick(rng, FOLDERS) } : { tag: pick(rng, TAGS), archived: false };
      out.push({ kind, text: word(), filters });
    }
  }
  return out;
}
