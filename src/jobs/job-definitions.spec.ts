import { cronEvery } from './job-definitions.js';

describe('cronEvery', () => {
  it('turns an interval in seconds into a cron line, at minute resolution', () => {
    expect(cronEvery(0)).toBeUndefined();
    expect(cronEvery(1)).toBe('* * * * *');
    expect(cronEvery(60)).toBe('* * * * *');
    expect(cronEvery(300)).toBe('*/5 * * * *');
    expect(cronEvery(3600)).toBe('0 * * * *');
    expect(cronEvery(6 * 3600)).toBe('0 */6 * * *');
    expect(cronEvery(86_400)).toBe('0 0 * * *');
  });
});
