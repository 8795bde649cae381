// The current time and the day of the week, the way other hosts' JavaScript examples
// are written: plain exported functions, no toolhost contract, built with
// componentize-js (StarlingMonkey).

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

export function getCurrentTime() {
  return new Date().toISOString();
}

export function dayOfWeek(date) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const day = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(day.getTime()) ? undefined : DAYS[day.getUTCDay()];
}
