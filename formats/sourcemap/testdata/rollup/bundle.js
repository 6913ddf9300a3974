(function () {
  'use strict';

  // A ledger of rows, each row a class instance, kept by an index that
  // never forgets: the leak the heap tests look for.
  class LedgerRow {
    constructor(id, amount, memo) {
      this.id = id;
      this.amount = amount;
      this.memo = memo;
      this.tags = [];
    }

    total() {
      return this.amount * 100;
    }
  }

  class Ledger {
    constructor() {
      this.rows = new Map();
    }

    addRows(count) {
      for (let i = 0; i < count; i++) {
        const row = new LedgerRow(i, i * 3, 'memo ' + i);
        this.rows.set(i, row);
      }
      return this.rows.size;
    }
  }

  // Handlers that close over the row they were made for: each one keeps
  // its row alive through its context.
  function makeHandlers(ledger) {
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

  function keepForever(list, item) {
    list.push(item);
  }

  const retained = [];

  function start(count) {
    const ledger = new Ledger();
    ledger.addRows(count);
    keepForever(retained, ledger);
    keepForever(retained, makeHandlers(ledger));
    return ledger;
  }

  globalThis.appLedger = start(Number(globalThis.ROWS || 200));

})();
//# sourceMappingURL=bundle.js.map
