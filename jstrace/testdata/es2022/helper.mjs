let n = 0;
export function helper() { return 'helped'; }
export const counter = () => ++n;
export default class {}
