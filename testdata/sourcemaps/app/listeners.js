// Handlers that close over the row they were made for: each one keeps
// its row alive through its context.
export function makeHandlers(ledger) {
  const handlers = [];
  for (const row of ledger.rows.values()) {
    const onChange = (delta) => {
      row.amount += delta;
      return row.total();
    };
    handlers.push(onChange);
  }
  return handlers;
}

export function keepForever(list, item) {
  list.push(item);
}
