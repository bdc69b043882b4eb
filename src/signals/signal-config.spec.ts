import { googleSignalConfig, metaSignalConfig, signalConfigErrors } from './signal-config.js';

describe('signal config per platform (SPEC 10.4)', () => {
  it('names unknown keys and wrong types under config.<key>, and missing required keys only when activating', () => {
    expect(signalConfigErrors('google_ads', { conversion_action_id: 42, lookback: 30 }, false)).toEqual({
      'config.conversion_action_id': ['Not a valid string.'],
      'config.lookback': ['Unknown setting for a google_ads signal; expected conversion_action_id.'],
    });
    expect(signalConfigErrors('google_ads', {}, false)).toEqual({});
    expect(signalConfigErrors('google_ads', {}, true)).toEqual({ 'config.conversion_action_id': ['This field is required.'] });
    expect(signalConfigErrors('meta_ads', { pixel_id: '12', event_name: 'Purchase', action_source: 'shop' }, true)).toEqual({
      'config.action_source': [expect.stringMatching(/^"shop" is not a valid choice/)],
    });
    expect(signalConfigErrors('meta_ads', { pixel_id: 'abc', test_event_code: 'TEST 1' }, false)).toEqual({
      'config.pixel_id': ['A Meta pixel (dataset) id: 1 to 30 digits.'],
      'config.test_event_code': ['A test event code: 1 to 64 letters, digits, `_` or `-`.'],
    });
  });

  it('reads a complete config for delivery, and nothing from an incomplete one', () => {
    expect(googleSignalConfig({ conversion_action_id: '123' })).toEqual({ conversionActionId: '123' });
    expect(googleSignalConfig({})).toBeUndefined();
    expect(metaSignalConfig({ pixel_id: '9', event_name: 'Lead', action_source: 'website' })).toEqual({
      pixelId: '9',
      eventName: 'Lead',
      actionSource: 'website',
      testEventCode: null,
    });
    expect(metaSignalConfig({ pixel_id: '9', event_name: 'Lead' })).toBeUndefined();
  });
});
