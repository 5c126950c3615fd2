// ARPAbet (the CMU Pronouncing Dictionary's phoneme set, stress removed) -> IPA, for display.
// Vowels without stress marks: AH is written ʌ (stressed) in CMUdict's convention; unstressed
// schwa and ʌ are one phoneme there, shown as ʌ. ER is ɝ.
import { is } from '../validate.js';

const IPA: Record<string, string> = {
  AA: 'ɑ', AE: 'æ', AH: 'ʌ', AO: 'ɔ', AW: 'aʊ', AY: 'aɪ', EH: 'ɛ', ER: 'ɝ', EY: 'eɪ', IH: 'ɪ', IY: 'i',
  OW: 'oʊ', OY: 'ɔɪ', UH: 'ʊ', UW: 'u', B: 'b', CH: 'tʃ', D: 'd', DH: 'ð', F: 'f', G: 'ɡ', HH: 'h',
  JH: 'dʒ', K: 'k', L: 'l', M: 'm', N: 'n', NG: 'ŋ', P: 'p', R: 'ɹ', S: 's', SH: 'ʃ', T: 't', TH: 'θ',
  V: 'v', W: 'w', Y: 'j', Z: 'z', ZH: 'ʒ',
};

/** ["F", "OW", "N"] -> "foʊn". Symbols outside ARPAbet (stress digits are ignored) show as ⟨X⟩. */
export function arpabetToIpa(phonemes: string[]): string {
  is.array(is.string)(phonemes, 'arpabetToIpa: phonemes');
  // (An own key only: "constructor" is not a phoneme.)
  const ipa = (p: string) => (Object.prototype.hasOwnProperty.call(IPA, p) ? IPA[p] : undefined);
  return phonemes.map((p) => ipa(p.replace(/[0-2]$/, '')) ?? `⟨${p}⟩`).join('');
}
