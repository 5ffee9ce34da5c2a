import { markup, type SafeHtml } from '../../../identity/ui/html.js';
import type { Ui } from '../../../identity/ui/index.js';

/** An instant of the admin API (ISO 8601) as text, UTC to the second; none or invalid → ''. */
export function timeText(value: unknown): string {
  const date = typeof value === 'string' || value instanceof Date ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** An instant as `<time>`: UTC to the second, the same for every administrator. */
export function timeHtml(value: unknown): SafeHtml {
  if (value === null || value === undefined || value === '') return markup`—`;
  const text = timeText(value);
  if (!text) return markup`${String(value)}`;
  const [day, time] = [text.slice(0, 10), text.slice(11)];
  // Breaks between the date and the time only.
  return markup`<time datetime="${new Date(String(value)).toISOString()}"><span class="nowrap">${day}</span> <span class="nowrap">${time}</span></time>`;
}

/** A duration in its largest unit and the next ("3 d 4 h", "12 min 5 s"). */
export function durationText(ui: Ui, ms: number): string {
  const units = [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
    ['s', 1],
  ] as const;
  const total = Math.max(0, Math.floor(ms / 1000));
  const first = units.findIndex(([, size]) => total >= size);
  if (first === -1) return ui.t('console:keys.units.s', { n: 0 });
  const [unit, size] = units[first]!;
  const parts = [ui.t(`console:keys.units.${unit}`, { n: Math.floor(total / size) })];
  const next = units[first + 1];
  if (next) {
    const n = Math.floor((total % size) / next[1]);
    if (n > 0) parts.push(ui.t(`console:keys.units.${next[0]}`, { n }));
  }
  return parts.join(' ');
}
