import './base.css';
import './fromtop.css';
