import { execFileSync } from "child_process";
import { test } from "@playwright/test";
import { PONDER_BIN } from "../servers";

/** A counted phrase: one form per CLDR plural category. */
type Plural = Record<"zero" | "one" | "two" | "few" | "many" | "other", string>;
type Catalogue = Record<string, string | Plural>;

// Ponder's own catalogues, as the built server prints them (`ponder catalogue`): the suite reads
// the page's words from the same source the page does, and checks plurals and numbers against
// the browser's own Intl (an implementation independent of Ponder's).
const ALL: Record<string, Catalogue> = JSON.parse(
  execFileSync(PONDER_BIN, ["catalogue"], { encoding: "utf8" }),
);

export const LOCALES = ["en", "pt-BR", "ja", "ar"] as const;
export type Tag = (typeof LOCALES)[number];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The words of one locale, with the helpers a test needs to find and check them. */
export class Words {
  readonly c: Catalogue;

  constructor(readonly tag: string) {
    const found = ALL[tag];
    if (!found) throw new Error(`no catalogue for ${tag}`);
    this.c = found;
  }

  /** A plain string of the catalogue, with `{name}` values put in. */
  t(key: string, values: Record<string, string | number> = {}): string {
    const template = this.c[key];
    if (typeof template !== "string") throw new Error(`${key} is not a plain string`);
    return template.replace(/\{(\w+)\}/g, (all, name) => (name in values ? String(values[name]) : all));
  }

  /** A number as the browser writes it in this locale. */
  num(n: number, decimals = 0): string {
    return new Intl.NumberFormat(this.tag, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(n);
  }

  /** A counted phrase for `n`, its form chosen by the browser's CLDR rules. */
  count(key: string, n: number): string {
    const plural = this.c[key] as Plural;
    if (typeof plural !== "object") throw new Error(`${key} is not a plural`);
    const form = plural[new Intl.PluralRules(this.tag).select(n) as keyof Plural];
    return form.replace("{n}", this.num(n));
  }

  /** A regular expression source matching a template, its values given as regex sources. */
  src(template: string, values: Record<string, string> = {}): string {
    return template
      .split(/(\{\w+\})/)
      .map((part) => {
        const m = part.match(/^\{(\w+)\}$/);
        return m && m[1] in values ? values[m[1]] : escape(part);
      })
      .join("");
  }

  /** A regular expression for the catalogue string `key` (anchored when `whole`). */
  re(key: string, values: Record<string, string> = {}, whole = false): RegExp {
    const s = this.src(this.t(key), values);
    return new RegExp(whole ? `^${s}$` : s);
  }

  /** A regex source for a duration with one decimal below a minute ("4.2s", "4,2 s"). */
  secondsSrc(): string {
    return this.src(this.t("seconds_short"), { n: "\\d+[.,]\\d" });
  }

  /** A regex source for whole live seconds ("12s"). */
  liveSecondsSrc(): string {
    return this.src(this.t("seconds_short"), { n: "\\d+" });
  }

  /** The header of a finished block with its time and word count, as a regular expression. */
  thoughtRe(words: number): RegExp {
    const timed = this.src(this.t("thought_for"), { time: this.secondsSrc() });
    return new RegExp(`^${timed}${escape(this.t("separator"))}${escape(this.count("words", words))}$`);
  }

  /** Every plain string of the catalogue (plural forms included). */
  strings(): string[] {
    return Object.values(this.c).flatMap((v) => (typeof v === "string" ? [v] : Object.values(v)));
  }
}

/** The words of the running test's locale (the project's `locale`, English by default). */
export function words(): Words {
  let locale: string | undefined;
  try {
    locale = test.info().project.use.locale;
  } catch {
    locale = undefined;
  }
  return new Words(locale ?? "en");
}

export const EN = new Words("en");
