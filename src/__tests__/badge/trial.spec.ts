import { assess } from '../../badge/levels';
import { observedHeadline } from '../../badge/trial';
import { observedCrash, trialOutcome } from '../fixtures';

describe('observedHeadline', () => {
  it("gives a Keras error's own line, past its wrapper, and keeps the whole message for the panel", () => {
    const message =
      "Exception encountered when calling Sequential.call().\n\nInput 0 with name 'None' of layer 'dense' is incompatible with the layer: expected axis -1 of input shape to have value 4, but received input with shape (32, 5)\n\nArguments received by Sequential.call():\n  • inputs=tf.Tensor(shape=(32, 5), dtype=float32)";
    const trial = {
      ...trialOutcome('crashed', null),
      exception: 'ValueError',
      message,
      line: 1
    };
    expect(observedHeadline(trial)).toBe(
      "ValueError: Input 0 with name 'None' of layer 'dense' is incompatible with the layer: expected axis -1 of input shape to have value 4, but received input with shape (32, 5)"
    );
    const assessment = assess({ ...observedCrash, trial })!;
    expect(assessment.cause).toBe(observedHeadline(trial));
    expect(assessment.fullMessage).toBe(`ValueError: ${message}`);
    // A one-line message is its own headline, with nothing folded away.
    const short = { ...trial, exception: 'KeyError', message: "'Agee'" };
    expect(observedHeadline(short)).toBe("KeyError: 'Agee'");
    expect(
      assess({ ...observedCrash, trial: short })!.fullMessage
    ).toBeUndefined();
  });
});
