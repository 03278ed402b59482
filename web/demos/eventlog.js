// The event log every demo page shows: newest first, bounded, and mirrored into an array that
// tests and people at the console read (window.strataDemo.events).

/**
 * Returns logEvent(name, detail): appends {name, detail, time} to events and prepends a line to the
 * list element, keeping at most max lines on the page.
 * @param {{name: string, detail: string, time: number}[]} events
 * @param {HTMLElement} list an <ol>
 * @param {number} [max]
 */
export function eventLog(events, list, max = 60) {
  return function logEvent(name, detail = '') {
    events.push({ name, detail, time: Date.now() });
    const li = document.createElement('li');
    li.innerHTML = '<time></time> <b></b> <span></span>';
    li.querySelector('time').textContent = new Date().toLocaleTimeString([], { hour12: false });
    li.querySelector('b').textContent = name;
    li.querySelector('span').textContent = detail;
    list.prepend(li);
    while (list.children.length > max) list.lastChild.remove();
  };
}
