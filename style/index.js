import './base.css';
import './fromtop.css';
import './forecast.css';
