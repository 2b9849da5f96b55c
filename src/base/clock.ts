/** Time as the use cases see it; tests pass a movable clock instead of touching Date. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A clock tests can move.
 *
 * ```ts
 * const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
 * clock.advance(31 * 24 * 3600 * 1000); // a session of 30 days has now expired
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  constructor(start: Date = new Date()) {
    this.#now = start.getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(milliseconds: number): void {
    this.#now += milliseconds;
  }
}
