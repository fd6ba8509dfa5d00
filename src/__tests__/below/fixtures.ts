/** What the specs of the chain share: an edit above, the cell below it breaks, and a claim. */
import type { IChainClaim } from '../../contract/tokens';
import { belowOutcome as outcome } from '../fixtures';

export const EDIT = "df = pd.DataFrame({'Age': [1]})";
export const BELOW = "df['age'].mean()";

export function claim(over: Partial<IChainClaim> = {}): IChainClaim {
  return {
    originId: 'e',
    originSource: "df = pd.DataFrame({'Age': [1]})",
    origin: 'edited',
    outcome: outcome(),
    ...over
  };
}
