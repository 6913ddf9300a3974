import { Ledger } from './ledger.js';
import { makeHandlers, keepForever } from './listeners.js';

const retained = [];

function start(count) {
  const ledger = new Ledger();
  ledger.addRows(count);
  keepForever(retained, ledger);
  keepForever(retained, makeHandlers(ledger));
  return ledger;
}

globalThis.appLedger = start(Number(globalThis.ROWS || 200));
