// A tiny event emitter: strata's Session and Handle use it for server events.
// It is deliberately not EventTarget, so that listeners get plain values, not Event wrappers.

export class Emitter {
  #listeners = new Map();

  /**
   * Adds a listener and returns a function that removes it again.
   * @param {string} name
   * @param {(value: any) => void} fn
   * @returns {() => void}
   */
  on(name, fn) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, new Set());
    this.#listeners.get(name).add(fn);
    return () => this.off(name, fn);
  }

  /** Like on, but the listener runs at most once. */
  once(name, fn) {
    const off = this.on(name, (value) => {
      off();
      fn(value);
    });
    return off;
  }

  off(name, fn) {
    this.#listeners.get(name)?.delete(fn);
  }

  /** Resolves with the next value emitted under name. */
  next(name) {
    return new Promise((resolve) => this.once(name, resolve));
  }

  emit(name, value) {
    for (const fn of [...(this.#listeners.get(name) ?? [])]) {
      try {
        fn(value);
      } catch (err) {
        // A broken listener must not stop the others or the event loop of the session.
        console.error(`strata: listener for "${name}" threw`, err);
      }
    }
  }
}
