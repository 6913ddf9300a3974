// A ledger of rows, each row a class instance, kept by an index that
// never forgets: the leak the heap tests look for.
export class LedgerRow {
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

export class Ledger {
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
